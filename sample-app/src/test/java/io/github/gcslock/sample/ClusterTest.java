package io.github.gcslock.sample;

import io.github.gcslock.LockRegistry;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The core of run-cluster.sh in one JVM: two instances share a standalone emulator, exactly one runs
 * the long job, and when the holder stops the other takes over.
 */
class ClusterTest {

    private static ConfigurableApplicationContext instance(GcsEmulator gcs, String name) {
        // Command-line arguments, as run-cluster.sh passes them: they override application.properties.
        return new SpringApplicationBuilder(SampleApplication.class).web(WebApplicationType.NONE)
                .run("--gcslock.emulator.embedded=false", "--gcslock.emulator.endpoint=" + gcs.endpoint(),
                        "--gcslock.bucket=gcslock", "--spring.application.name=" + name, "--gcslock.ttl=2s", "--gcslock.write-rate-window=20ms",
                        "--gcslock.refresh-interval=300ms", "--sample.migration.step=50ms", "--sample.migration.steps=1000",
                        "--sample.migration.interval=50ms", "--sample.report.interval=1h", "--spring.main.banner-mode=off");
    }

    @Test
    void oneInstanceRunsTheLongJobAndAnotherTakesOverWhenItStops() {
        try (GcsEmulator gcs = GcsEmulator.start()) {
            gcs.createBucket("gcslock");
            ConfigurableApplicationContext a = instance(gcs, "a");
            ConfigurableApplicationContext b = instance(gcs, "b");
            try {
                await("more than 5 migration steps done by instance a or b").atMost(Duration.ofSeconds(60)).until(() ->
                        a.getBean(MigrationJob.class).completedSteps() + b.getBean(MigrationJob.class).completedSteps() > 5);
                boolean aHolds = a.getBean(LockRegistry.class).heldLeases().stream().anyMatch(l -> l.name().equals("long-migration"));
                boolean bHolds = b.getBean(LockRegistry.class).heldLeases().stream().anyMatch(l -> l.name().equals("long-migration"));
                assertThat(aHolds ^ bHolds).as("exactly one instance holds the job").isTrue();
                ConfigurableApplicationContext holder = aHolds ? a : b;
                ConfigurableApplicationContext follower = aHolds ? b : a;
                int followerStepsBefore = follower.getBean(MigrationJob.class).completedSteps();
                assertThat(followerStepsBefore).isZero();
                holder.close();
                await("the follower to run migration steps after the holder closed")
                        .atMost(Duration.ofSeconds(60)).until(() -> follower.getBean(MigrationJob.class).completedSteps() > 0);
            } finally {
                a.close();
                b.close();
            }
        }
    }
}
