package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code WAIT} job waiting for another instance's lock when the application shuts down: the wait ends at once
 * with one INFO line, instead of holding shutdown up for {@code spring.lifecycle.timeout-per-shutdown-phase} and
 * ending in an ERROR with a stack trace.
 */
@ExtendWith(OutputCaptureExtension.class)
class ShutdownDuringWaitTest {

        static class WaitingJob {
        private final AtomicInteger runs = new AtomicInteger();

        public int runs() {
            return runs.get();
        }

        @Scheduled(fixedDelay = 60_000)
        @GcsLocked(value = "nightly-migration", ifLocked = IfLocked.WAIT)
        public void migrate() {
            runs.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableScheduling
    static class App {
        @Bean
        WaitingJob waitingJob() {
            return new WaitingJob();
        }
    }

    /** A thread is inside the registry's wait for a lock, called from the @GcsLocked interceptor. */
    private static boolean aJobWaitsForItsLock() {
        return Thread.getAllStackTraces().values().stream().anyMatch(stack -> {
            boolean inWait = false;
            boolean fromInterceptor = false;
            for (StackTraceElement e : stack) {
                inWait |= e.getClassName().equals("io.github.gcslock.Acquirer");
                fromInterceptor |= e.getClassName().equals("io.github.gcslock.spring.GcsLockedInterceptor");
            }
            return inWait && fromInterceptor;
        });
    }

    @Test
    void aWaitInProgressEndsPromptlyAndQuietlyWhenTheContextCloses(CapturedOutput output) throws Exception {
        String bucket = SharedEmulator.newBucket();
        try (GcsLockRegistry other = SharedEmulator.holdingInstance(bucket)) {
            Lease held = other.tryAcquire("nightly-migration").orElseThrow(); // another instance runs it
            SpringApplication app = new SpringApplication(App.class);
            app.setWebApplicationType(WebApplicationType.NONE);
            ConfigurableApplicationContext ctx = app.run("--gcslock.emulator.endpoint=" + SharedEmulator.GCS.endpoint(),
                    "--gcslock.bucket=" + bucket, "--spring.lifecycle.timeout-per-shutdown-phase=10s");
            // the scheduler's first run starts at once and waits for the lock
            org.awaitility.Awaitility.await("the scheduled job to wait for its lock, held by another instance")
                    .atMost(Duration.ofSeconds(30)).until(ShutdownDuringWaitTest::aJobWaitsForItsLock);
            WaitingJob job = ctx.getBean(WaitingJob.class);
            long start = System.nanoTime();
            ctx.close();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            System.out.println("SHUTDOWN took " + took.toMillis() + " ms");
            assertThat(took).as("shutdown is not held up by the wait").isLessThan(Duration.ofSeconds(5));
            assertThat(job.runs()).isZero();
            String out = output.getAll();
            assertThat(out.lines().filter(l -> l.contains("INFO") && l.contains("WaitingJob.migrate(..) did not run: the application "
                    + "is shutting down, so it stopped waiting for lock 'nightly-migration'")).count()).isEqualTo(1);
            assertThat(out).doesNotContain("ERROR").doesNotContain("GcsLockInterruptedException").doesNotContain("\tat ");
            held.release();
        }
    }
}
