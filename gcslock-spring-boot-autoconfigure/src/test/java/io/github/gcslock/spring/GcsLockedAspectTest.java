package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** {@code @GcsLocked} in a running application against the emulator. */
@SpringBootTest(classes = GcsLockedAspectTest.App.class, properties = {
        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=300ms", "gcslock.backoff.initial=10ms", "gcslock.backoff.max=50ms",
        "app.lock-name=from-placeholder"})
class GcsLockedAspectTest {

    static final String BUCKET = SharedEmulator.newBucket();

    @DynamicPropertySource
    static void gcs(DynamicPropertyRegistry r) {
        SharedEmulator.register(r, BUCKET);
    }

    @Autowired
    Jobs jobs;
    @Autowired
    Events events;

    private final GcsLockRegistry other = SharedEmulator.otherInstance(BUCKET);

    @AfterEach
    void closeOther() {
        other.close();
        events.seen.clear();
    }

    @Test
    void runsTheMethodHoldingTheLockAndReleasesAfterwards() {
        assertThat(jobs.report()).isEqualTo("ran");
        assertThat(jobs.lastLease().name()).isEqualTo("report");
        assertThat(jobs.lastLease().isHealthy()).as("released after the method").isFalse();
        assertThat(other.tryAcquire("report")).isPresent();
        assertThat(events.seen).anyMatch(e -> e instanceof GcsLockAcquiredEvent)
                .anyMatch(e -> e instanceof GcsLockReleasedEvent);
    }

    @Test
    void skipsWhenAnotherInstanceHoldsTheLock() {
        Lease held = other.tryAcquire("report").orElseThrow();
        int before = jobs.runs();
        assertThat(jobs.report()).isNull();
        assertThat(jobs.optionalReport()).isEmpty();
        assertThat(jobs.count()).isZero();
        assertThat(jobs.runs()).isEqualTo(before);
        assertThat(events.seen).anySatisfy(e -> {
            assertThat(e).isInstanceOf(GcsLockSkippedEvent.class);
            assertThat(((GcsLockSkippedEvent) e).method().getName()).isIn("report", "optionalReport", "count");
        });
        held.release();
    }

    @Test
    void failModeThrowsNamingTheLockAndHolder() {
        Lease held = other.tryAcquire("strict").orElseThrow();
        assertThatThrownBy(() -> jobs.strict()).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("'strict'").hasMessageContaining(other.owner());
        held.release();
    }

    @Test
    void waitModeWaitsForTheHolder() throws Exception {
        Lease held = other.tryAcquire("patient").orElseThrow();
        CompletableFuture.runAsync(() -> {
            sleep(300);
            held.release();
        });
        assertThat(jobs.patient()).isEqualTo("waited");
    }

    @Test
    void spelExpressionTemplateAndPlaceholderNames() {
        assertThat(jobs.perTenant("acme")).isEqualTo("tenant-acme");
        assertThat(jobs.template(42)).isEqualTo("order-42");
        assertThat(jobs.placeholder()).isEqualTo("from-placeholder");
        assertThat(jobs.metaAnnotated()).isEqualTo("nightly");
    }

    @Test
    void reentrantOnOneThreadWithoutGcsRequests() {
        SharedEmulator.GCS.faults().resetCounters();
        assertThat(jobs.outer()).isEqualTo("inner-ran");
        // One create and one delete for the outer call; the nested call made none.
        assertThat(SharedEmulator.GCS.faults().requestCount(Operation.INSERT)).isEqualTo(1);
        assertThat(SharedEmulator.GCS.faults().requestCount(Operation.DELETE)).isEqualTo(1);
    }

    @Test
    void releasesWhenTheMethodThrows() {
        assertThatThrownBy(() -> jobs.failing()).isInstanceOf(IllegalStateException.class).hasMessage("job failed");
        assertThat(other.tryAcquire("failing")).isPresent();
    }

    @Test
    void holdAtLeastKeepsTheLockAfterAShortJob() {
        jobs.shortJob();
        assertThat(other.tryAcquire("short")).as("still held after the method returned").isEmpty();
        await("'short' to be free after its holdAtLeast")
                .atMost(Duration.ofSeconds(30)).until(() -> other.tryAcquire("short").isPresent());
    }

    /**
     * Spring's default scheduler has one thread: every tick of a {@code fixedRate} job comes on the thread
     * whose previous run called {@code releaseAfter}. Within the hold the job must not run again (the
     * ticks are skipped); after it, it runs again.
     */
    @Test
    void holdAtLeastOnASingleThreadSchedulerDoesNotRunTheJobAgainWithinTheHold() {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            scheduler.scheduleAtFixedRate(jobs::heldJob, 0, 50, TimeUnit.MILLISECONDS);
            await("the held job to run twice on the single-thread scheduler")
                    .atMost(Duration.ofSeconds(30)).until(() -> jobs.heldRuns() >= 2);
        } finally {
            scheduler.shutdownNow();
        }
        assertThat(jobs.runsInsideAnEarlierHold()).as("runs that started while an earlier run's hold was still kept").isZero();
        assertThat(events.seen).as("ticks within the hold were skipped")
                .anyMatch(e -> e instanceof GcsLockSkippedEvent s && s.lockName().equals("held-job"));
    }

    @Test
    void asyncMethodsHoldTheLockOnTheirOwnThread() throws Exception {
        String thread = jobs.async().get(5, TimeUnit.SECONDS);
        assertThat(thread).isNotEqualTo(Thread.currentThread().getName());
        assertThat(other.tryAcquire("async")).isPresent();
    }

    @Test
    void worksOnVirtualThreads() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21+");
        // Thread.ofVirtual() by reflection: this module is compiled for Java 17.
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        java.util.concurrent.atomic.AtomicReference<Object> result = new java.util.concurrent.atomic.AtomicReference<>();
        Runnable task = () -> {
            try {
                result.set(jobs.fencingToken());
            } catch (RuntimeException e) {
                result.set(e);
            }
        };
        Thread t = (Thread) Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class).invoke(builder, task);
        t.join(5000);
        assertThat(result.get()).isInstanceOf(Long.class);
        assertThat(other.tryAcquire("token")).isPresent();
    }

    @Test
    void currentLeaseIsVisibleInsideOnly() {
        assertThat(GcsLocks.currentLease()).isEmpty();
        assertThatThrownBy(GcsLocks::checkHealthy).isInstanceOf(IllegalStateException.class);
        assertThat(jobs.fencingToken()).isPositive();
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @GcsLocked("nightly")
    @interface NightlyJob {
    }

    @Component
    static class Jobs {
        final AtomicInteger runs = new AtomicInteger();
        volatile Lease lastLease;
        @Autowired
        @Lazy
        Jobs self;

        // Fields of a proxied bean are read through methods: the proxy's own fields are empty.
        public int runs() {
            return runs.get();
        }

        public Lease lastLease() {
            return lastLease;
        }

        @GcsLocked("report")
        public String report() {
            runs.incrementAndGet();
            lastLease = GcsLocks.currentLease().orElseThrow();
            return "ran";
        }

        @GcsLocked("report")
        public Optional<String> optionalReport() {
            return Optional.of("ran");
        }

        @GcsLocked("report")
        public int count() {
            return 1;
        }

        @GcsLocked(value = "strict", ifLocked = IfLocked.FAIL)
        public void strict() {
        }

        @GcsLocked(value = "patient", ifLocked = IfLocked.WAIT, maxWait = "5s")
        public String patient() {
            return "waited";
        }

        @GcsLocked("'tenant-' + #tenant")
        public String perTenant(String tenant) {
            return GcsLocks.currentLease().orElseThrow().name();
        }

        @GcsLocked("order-#{#id}")
        public String template(int id) {
            return GcsLocks.currentLease().orElseThrow().name();
        }

        @GcsLocked("${app.lock-name}")
        public String placeholder() {
            return GcsLocks.currentLease().orElseThrow().name();
        }

        @NightlyJob
        public String metaAnnotated() {
            return GcsLocks.currentLease().orElseThrow().name();
        }

        @GcsLocked("outer")
        public String outer() {
            return self.inner();
        }

        @GcsLocked("outer")
        public String inner() {
            return "inner-ran";
        }

        @GcsLocked("failing")
        public void failing() {
            throw new IllegalStateException("job failed");
        }

        @GcsLocked(value = "short", holdAtLeast = "800ms")
        public void shortJob() {
        }

        final AtomicInteger heldRuns = new AtomicInteger();
        final AtomicInteger runsInsideAnEarlierHold = new AtomicInteger();
        volatile Lease lastHeldLease;

        public int heldRuns() {
            return heldRuns.get();
        }

        public int runsInsideAnEarlierHold() {
            return runsInsideAnEarlierHold.get();
        }

        @GcsLocked(value = "held-job", holdAtLeast = "1s")
        public void heldJob() {
            Lease previous = lastHeldLease;
            if (previous != null && previous.isHealthy()) {
                runsInsideAnEarlierHold.incrementAndGet(); // the earlier run's hold has not ended
            }
            lastHeldLease = GcsLocks.currentLease().orElseThrow();
            heldRuns.incrementAndGet();
        }

        @Async
        @GcsLocked("async")
        public CompletableFuture<String> async() {
            GcsLocks.checkHealthy();
            return CompletableFuture.completedFuture(Thread.currentThread().getName());
        }

        @GcsLocked("token")
        public long fencingToken() {
            GcsLocks.checkHealthy();
            return GcsLocks.currentLease().orElseThrow().fencingToken();
        }
    }

    static class Events implements ApplicationListener<GcsLockEvent> {
        final List<GcsLockEvent> seen = new CopyOnWriteArrayList<>();

        @Override
        public void onApplicationEvent(GcsLockEvent event) {
            seen.add(event);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableAsync
    static class App {
        @Bean
        Jobs jobs() {
            return new Jobs();
        }

        @Bean
        Events events() {
            return new Events();
        }
    }
}
