package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.autoconfigure.GcsLockActuatorAutoConfiguration;
import io.github.gcslock.autoconfigure.GcsLockAutoConfiguration;
import io.github.gcslock.autoconfigure.GcsLockEmulatorAutoConfiguration;
import io.github.gcslock.spring.actuate.GcsLockHealthIndicator;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * GCS unreachable: health DOWN with the last error, since when and how many; one WARN line per failed
 * run (no stack trace); one INFO line when GCS answers again; a skip visible once at INFO.
 */
@ExtendWith(OutputCaptureExtension.class)
class OutageTest {

    private static GcsEmulator gcs; // its own emulator: the faults below must not reach other tests

    @BeforeAll
    static void start() {
        gcs = GcsEmulator.start();
        gcs.createBucket("outage");
    }

    @AfterEach
    void healGcs() {
        gcs.faults().reset();
    }

    @AfterAll
    static void stop() {
        gcs.close();
    }

    static class Job {
        private final AtomicInteger runs = new AtomicInteger();

        @GcsLocked("nightly")
        public void run() {
            runs.incrementAndGet();
        }

        public int runs() {
            return runs.get();
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcsLockAutoConfiguration.class,
                        GcsLockActuatorAutoConfiguration.class))
                .withPropertyValues("gcslock.emulator.endpoint=" + gcs.endpoint(), "gcslock.bucket=outage",
                        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.operation-timeout=300ms")
                .withBean(Job.class);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> gcsDetail(Health health) {
        return (Map<String, Object>) health.getDetails().get("gcs");
    }

    private static long lines(CapturedOutput output, String part) {
        return output.getAll().lines().filter(l -> l.contains(part)).count();
    }

    @Test
    void anOutageIsVisibleInHealthAndLogsOneLinePerRunAndOneWhenOver(CapturedOutput output) {
        runner().run(ctx -> {
            Job job = ctx.getBean(Job.class);
            GcsLockHealthIndicator health = ctx.getBean(GcsLockHealthIndicator.class);
            assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);

            gcs.faults().failNext(100_000, 503);
            job.run();
            job.run();
            assertThat(job.runs()).as("never runs when it is unknown whether the lock is free").isZero();
            Health down = health.health(true);
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(gcsDetail(down)).containsEntry("reachable", false).containsEntry("failures", 2L)
                    .containsKeys("failingSince", "lastErrorAt");
            assertThat((String) gcsDetail(down).get("lastError")).contains("nightly");
            assertThat(lines(output, "WARN  [main] i.g.g.s.GcsLockedInterceptor - @GcsLocked Job.run(..) did not run: "
                    + "could not reach GCS for lock 'nightly', so it is unknown whether the lock is free: 503 Injected failure 503 "
                    + "(GoogleJsonResponseException: 503 Service Unavailable) [GCS calls failing since ")).isEqualTo(2);
            assertThat(output.getAll()).doesNotContain("\tat ");

            gcs.faults().reset();
            job.run();
            assertThat(job.runs()).isEqualTo(1);
            assertThat(lines(output, "gcslock: GCS is reachable again after")).isEqualTo(1);
            Health up = health.health(true);
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(gcsDetail(up)).containsEntry("reachable", true).doesNotContainKey("lastError");
        });
    }

    @Test
    void aSkipIsLoggedOnceAtInfo(CapturedOutput output) {
        runner().run(ctx -> {
            Job job = ctx.getBean(Job.class);
            GcsLockRegistry other = GcsLockRegistry.builder(gcs.storage(), "outage").ttl(Duration.ofSeconds(2))
                    .writeRateWindow(Duration.ofMillis(20)).build();
            Lease held = other.tryAcquire("nightly").orElseThrow();
            try {
                job.run();
                job.run();
                job.run();
            } finally {
                held.release();
                other.close();
            }
            assertThat(job.runs()).isZero();
            assertThat(lines(output, "lock 'nightly' is held by another instance, so this run is skipped")).isEqualTo(1);
            assertThat(ctx.getBean(GcsLockHealthIndicator.class).health(true).getStatus()).isEqualTo(Status.UP);
        });
    }
}
