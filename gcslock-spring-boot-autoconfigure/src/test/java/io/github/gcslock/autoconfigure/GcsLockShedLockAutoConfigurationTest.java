package io.github.gcslock.autoconfigure;

import com.google.cloud.storage.BlobId;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.shedlock.GcsLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The ShedLock provider is auto-configured with shedlock-spring present, backs off, and locks @SchedulerLock methods. */
class GcsLockShedLockAutoConfigurationTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();

    private ApplicationContextRunner runner() {
        return gcs.runner(GcsLockShedLockAutoConfiguration.class);
    }

    @Test
    void aLockProviderOnTheRegistryIsAutoConfigured() {
        runner().run(ctx -> {
            assertThat(ctx).hasSingleBean(LockProvider.class).hasSingleBean(GcsLockProvider.class);
            Optional<SimpleLock> lock = ctx.getBean(LockProvider.class).lock(
                    new LockConfiguration(java.time.Instant.now(), "auto-configured", Duration.ofMinutes(1), Duration.ZERO));
            assertThat(lock).isPresent();
            assertThat(gcs.storage().get(BlobId.of("locks", "gcslock/auto-configured"))).isNotNull();
            lock.get().unlock();
        });
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnLockProvider() {
        runner().withUserConfiguration(OwnProvider.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(LockProvider.class).doesNotHaveBean(GcsLockProvider.class);
            assertThat(ctx.getBean(LockProvider.class)).isSameAs(OwnProvider.PROVIDER);
        });
    }

    @Test
    void absentWithoutShedLockSpring() {
        runner().withClassLoader(new FilteredClassLoader(EnableSchedulerLock.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(GcsLockProvider.class));
    }

    @Test
    void absentWhenGcsLockIsDisabled() {
        runner().withPropertyValues("gcslock.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(GcsLockProvider.class));
    }

    @Test
    void schedulerLockMethodsLockThroughGcsAndSkipWhileAnotherInstanceHoldsTheName() {
        runner().withUserConfiguration(ShedLockApp.class).run(ctx -> {
            Job job = ctx.getBean(Job.class);
            job.run();
            assertThat(job.runs()).isEqualTo(1);
            assertThat(job.lockObjectSeenDuringRun()).isTrue();
            assertThat(gcs.storage().get(BlobId.of("locks", "gcslock/nightly-report"))).as("released after the run").isNull();

            try (GcsLockRegistry other = GcsLockRegistry.builder(gcs.storage(), "locks").build();
                 Lease held = other.tryAcquire("nightly-report").orElseThrow()) {
                job.run();
                assertThat(job.runs()).as("skipped: another instance holds the lock").isEqualTo(1);
            }
            job.run();
            assertThat(job.runs()).isEqualTo(2);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnProvider {
        static final LockProvider PROVIDER = configuration -> Optional.empty();

        @Bean
        LockProvider ownLockProvider() {
            return PROVIDER;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
    static class ShedLockApp {
        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {
        final AtomicInteger runs = new AtomicInteger();
        volatile boolean lockObjectSeenDuringRun;

        public int runs() { // through methods: the test sees the CGLIB proxy, whose own fields are unset
            return runs.get();
        }

        public boolean lockObjectSeenDuringRun() {
            return lockObjectSeenDuringRun;
        }

        @SchedulerLock(name = "nightly-report")
        public void run() {
            runs.incrementAndGet();
            lockObjectSeenDuringRun = gcs.storage().get(BlobId.of("locks", "gcslock/nightly-report")) != null;
        }
    }
}
