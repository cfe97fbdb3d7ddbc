package io.github.gcslock.spring;

import com.google.cloud.storage.BlobId;
import io.github.gcslock.Lease;
import io.github.gcslock.autoconfigure.GcsLockActuatorAutoConfiguration;
import io.github.gcslock.autoconfigure.GcsLockAutoConfiguration;
import io.github.gcslock.autoconfigure.GcsLockEmulatorAutoConfiguration;
import io.github.gcslock.autoconfigure.GcsLockIntegrationAutoConfiguration;
import io.github.gcslock.autoconfigure.GcsLockShedLockAutoConfiguration;
import io.github.gcslock.spring.actuate.GcsLockHealthIndicator;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.support.LockException;
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
import org.springframework.context.ApplicationContext;
import org.springframework.dao.CannotAcquireLockException;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The {@code gcs} part of the {@code gcsLock} health is kept in one place, from the registry's request events:
 * every path that cannot reach GCS makes it DOWN, any answered request ends the outage, and what sends no request
 * or is answered (a reentrant hold, a lost lease) is no outage.
 */
@ExtendWith(OutputCaptureExtension.class)
class HealthBookkeepingTest {

    private static GcsEmulator gcs; // its own emulator: the faults below must not reach other tests

    @BeforeAll
    static void start() {
        gcs = GcsEmulator.start();
        gcs.createBucket("health");
    }

    @AfterEach
    void heal() {
        gcs.faults().reset();
    }

    @AfterAll
    static void stop() {
        gcs.close();
    }

    static class Outer {
        private final Inner inner;
        private final AtomicReference<Runnable> beforeInner = new AtomicReference<>(() -> { });

        Outer(Inner inner) {
            this.inner = inner;
        }

        /** What the outer method does, holding the lock, before it calls the nested one (a method: beans are proxies). */
        public void beforeInner(Runnable action) {
            beforeInner.set(action);
        }

        @GcsLocked("shared")
        public void run() {
            beforeInner.get().run();
            inner.run();
        }
    }

    static class Inner {
        private int runs;
        private long requestsBeforeItRan = -1;

        public int runs() {
            return runs;
        }

        public long requestsBeforeItRan() {
            return requestsBeforeItRan;
        }

        @GcsLocked("shared")
        public void run() {
            runs++;
            requestsBeforeItRan = gcs.faults().totalRequests() - gcs.faults().requestCount(Operation.PATCH); // refreshes aside
        }
    }

    static class HoldingJob {
        /** Someone deletes this job's lock object while it runs: its lease is lost before it returns. */
        @GcsLocked(value = "held-at-least", holdAtLeast = "60s")
        public void run() {
            Lease lease = GcsLocks.currentLease().orElseThrow();
            gcs.storage().delete(BlobId.of("health", "gcslock/held-at-least"));
            await("the job's lease to be lost after its object was deleted")
                    .atMost(Duration.ofSeconds(30)).until(() -> lease.lostReason().isPresent());
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcsLockAutoConfiguration.class,
                        GcsLockActuatorAutoConfiguration.class, GcsLockShedLockAutoConfiguration.class,
                        GcsLockIntegrationAutoConfiguration.class))
                .withPropertyValues("gcslock.emulator.endpoint=" + gcs.endpoint(), "gcslock.bucket=health",
                        // Generous: a GCS call bounded to 300 ms ended in "Read timed out" on a loaded machine, an
                        // outage these tests did not make. The outages they make are 503s, refused at once.
                        "gcslock.ttl=10s", "gcslock.operation-timeout=3s")
                .withBean(Inner.class)
                .withBean(Outer.class);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> gcsDetail(ApplicationContext ctx) {
        Health health = ctx.getBean(GcsLockHealthIndicator.class).health(true);
        Map<String, Object> gcsDetail = (Map<String, Object>) health.getDetails().get("gcs");
        return Map.of("status", health.getStatus(), "reachable", gcsDetail.get("reachable"),
                "lastError", String.valueOf(gcsDetail.get("lastError")));
    }

    private static void assertOutage(ApplicationContext ctx, String path) {
        assertThat(gcsDetail(ctx)).as(path).containsEntry("status", Status.DOWN).containsEntry("reachable", false);
    }

    private static void assertReachable(ApplicationContext ctx, String path) {
        assertThat(gcsDetail(ctx)).as(path).containsEntry("status", Status.UP).containsEntry("reachable", true);
    }

    @Test
    void shedLockCallsThatCannotReachGcsAreAnOutage() {
        runner().run(ctx -> {
            LockProvider shedLock = ctx.getBean(LockProvider.class);
            gcs.faults().failNext(100_000, 503);
            assertThatThrownBy(() -> shedLock.lock(new LockConfiguration(Instant.now(), "report", Duration.ofSeconds(30), Duration.ZERO)))
                    .isInstanceOf(LockException.class);
            assertOutage(ctx, "after ShedLock's lock()");
            assertThat(gcsDetail(ctx).get("lastError").toString()).contains("report");
            gcs.faults().reset();
            shedLock.lock(new LockConfiguration(Instant.now(), "report", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
            assertReachable(ctx, "after ShedLock's lock() was answered");
        });
    }

    @Test
    void springIntegrationLocksThatCannotReachGcsAreAnOutage() {
        runner().run(ctx -> {
            Lock lock = ctx.getBean(GcsIntegrationLockRegistry.class).obtain("leader");
            gcs.faults().failNext(100_000, 503);
            assertThatThrownBy(lock::tryLock).isInstanceOf(CannotAcquireLockException.class);
            assertOutage(ctx, "after Spring Integration's tryLock()");
            gcs.faults().reset();
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
            assertReachable(ctx, "after tryLock() was answered");
        });
    }

    @Test
    void directLockRegistryCallsThatCannotReachGcsAreAnOutage() {
        runner().run(ctx -> {
            io.github.gcslock.LockRegistry locks = ctx.getBean(io.github.gcslock.LockRegistry.class);
            gcs.faults().failNext(100_000, 503);
            assertThatThrownBy(() -> locks.tryAcquire("direct")).isInstanceOf(io.github.gcslock.GcsLockException.class);
            assertOutage(ctx, "after LockRegistry.tryAcquire");
            gcs.faults().reset();
            assertThat(locks.inspect("direct")).isEmpty();
            assertReachable(ctx, "after an answered inspect (a 404)");
        });
    }

    @Test
    void aListingsLaterPageThatFailsIsAnOutage() {
        // 1001 objects: a page holds at most 1000 (on GCS and the emulator), so the listing takes two requests.
        gcs.createBucket("pages");
        com.google.cloud.storage.Storage storage = gcs.storage();
        for (int i = 0; i <= 1000; i++) {
            storage.create(com.google.cloud.storage.BlobInfo.newBuilder("pages", "gcslock/many-" + i).build());
        }
        GcsReachability reachability = new GcsReachability();
        java.util.concurrent.atomic.AtomicBoolean firstPage = new java.util.concurrent.atomic.AtomicBoolean(false);
        try (io.github.gcslock.GcsLockRegistry locks = io.github.gcslock.GcsLockRegistry.builder(gcs.storage(), "pages")
                .ttl(Duration.ofSeconds(2)).writeRateWindow(Duration.ofMillis(20)).operationTimeout(Duration.ofMillis(300))
                .listener(reachability).listener(new io.github.gcslock.LockEventListener() {
                    @Override
                    public void requestAnswered(String name) {
                        if (name == null && firstPage.compareAndSet(true, false)) {
                            gcs.faults().failNext(100_000, 503); // the first page was answered: every later request fails
                        }
                    }
                }).build()) {
            assertThat(locks.list()).hasSize(1001); // two pages, both answered
            firstPage.set(true);
            assertThatThrownBy(locks::list).isInstanceOf(io.github.gcslock.GcsLockException.class);
            assertThat(reachability.outage()).as("health after a listing whose second page could not be fetched").isPresent();
        }
    }

    @Test
    void theRequestsOfAnApplicationsOwnGcsLockRegistryReachTheHealthToo() {
        runner().withBean("ownLocks", io.github.gcslock.GcsLockRegistry.class,
                        () -> io.github.gcslock.GcsLockRegistry.builder(gcs.storage(), "health").ttl(Duration.ofSeconds(2)).writeRateWindow(Duration.ofMillis(20))
                                .operationTimeout(Duration.ofMillis(300)).build())
                .run(ctx -> {
                    io.github.gcslock.LockRegistry locks = ctx.getBean(io.github.gcslock.LockRegistry.class);
                    assertThat(locks).isSameAs(ctx.getBean("ownLocks"));
                    gcs.faults().failNext(100_000, 503);
                    assertThatThrownBy(() -> locks.tryAcquire("own")).isInstanceOf(io.github.gcslock.GcsLockException.class);
                    assertOutage(ctx, "after the application's own registry could not reach GCS");
                    gcs.faults().reset();
                    assertThat(locks.inspect("own")).isEmpty();
                    assertReachable(ctx, "after its answered inspect (a 404)");
                });
    }

    @Test
    void holdAtLeastReleasesALostLeaseAtOnceInsteadOfKeepingTheHealthDown() {
        runner().withBean(HoldingJob.class).run(ctx -> {
            io.github.gcslock.LockRegistry locks = ctx.getBean(io.github.gcslock.LockRegistry.class);
            ctx.getBean(HoldingJob.class).run();
            // Nothing is held any more: kept for the rest of holdAtLeast, the lost lease would keep gcsLock DOWN.
            await("the lost lease to be released at once, not kept for holdAtLeast")
                    .atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(locks.heldLeases()).isEmpty());
            assertThat(ctx.getBean(GcsLockHealthIndicator.class).health(true).getStatus()).isEqualTo(Status.UP);
        });
    }

    @Test
    void theAnsweredDeleteOfAReleaseEndsAnOutageOfRefreshes(CapturedOutput output) {
        runner().run(ctx -> {
            io.github.gcslock.LockRegistry locks = ctx.getBean(io.github.gcslock.LockRegistry.class);
            Lease lease = locks.tryAcquire("nightly").orElseThrow();
            gcs.faults().failNext(100_000, 503, Operation.PATCH); // refreshes fail; nothing else does
            await("the health to show the outage of the refreshes").atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertOutage(ctx, "after a failed refresh"));
            lease.release(); // its DELETE is answered
            await("the health to show GCS reachable after the release's DELETE").atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertReachable(ctx, "after the release's DELETE"));
            assertThat(output.getAll()).contains("gcslock: GCS is reachable again after");
        });
    }

    @Test
    void aNestedCallUnderALostLeaseIsNotAnOutage() {
        runner().run(ctx -> {
            Outer outer = ctx.getBean(Outer.class);
            outer.beforeInner(() -> {
                Lease lease = GcsLocks.currentLease().orElseThrow();
                gcs.storage().delete(BlobId.of("health", "gcslock/shared")); // someone deleted our lock object
                await("the lease whose object was deleted to be unhealthy").atMost(Duration.ofSeconds(60)).until(() -> !lease.isHealthy());
            });
            outer.run();
            assertThat(ctx.getBean(Inner.class).runs()).as("the nested call did not run").isZero();
            Map<String, Object> after = gcsDetail(ctx);
            assertThat(after).as("GCS answered every request").containsEntry("reachable", true).containsEntry("lastError", "null");
        });
    }

    @Test
    void aReentrantCallDuringAnOutageSendsNothingAndChangesNothing(CapturedOutput output) {
        runner().run(ctx -> {
            Outer outer = ctx.getBean(Outer.class);
            io.github.gcslock.LockRegistry locks = ctx.getBean(io.github.gcslock.LockRegistry.class);
            outer.beforeInner(() -> {
                gcs.faults().failNext(100_000, 503);
                assertThatThrownBy(() -> locks.tryAcquire("other")).isInstanceOf(io.github.gcslock.GcsLockException.class);
                assertOutage(ctx, "during the outage");
                gcs.faults().resetCounters();
            });
            outer.run(); // the nested @GcsLocked("shared") is a reentrant hold: no request
            assertThat(ctx.getBean(Inner.class).runs()).isEqualTo(1);
            assertThat(ctx.getBean(Inner.class).requestsBeforeItRan()).as("the reentrant call sent no request (refreshes aside)").isZero();
            // the outer release's DELETE failed too (the outage goes on): still DOWN, and no "reachable again"
            assertOutage(ctx, "after a reentrant call during the outage");
            assertThat(output.getAll()).doesNotContain("GCS is reachable again");
        });
    }
}
