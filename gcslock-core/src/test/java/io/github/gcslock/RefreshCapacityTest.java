package io.github.gcslock;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * DESIGN.md "Refresh capacity": refreshes run on threads that grow with the refreshes in flight, so a lease's
 * refresh never waits behind another lease's slow request. Every test holds chosen PATCHes back in the emulator
 * ({@code beforeNext(PATCH, object, …)} blocking on a latch — the request is processed, and commits, only when
 * the test opens the latch) and asserts what happens meanwhile, in causal order, not against the wall clock.
 */
class RefreshCapacityTest extends EmulatorTestBase {

    /** Confirmed refreshes per lock name. */
    private final Map<String, AtomicInteger> refreshed = new ConcurrentHashMap<>();
    private final Map<String, String> lost = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> released = new ConcurrentHashMap<>();

    private GcsLockRegistry registry(Duration ttl, Duration refresh, Duration operationTimeout) {
        return registry(ttl, refresh, operationTimeout, 3);
    }

    private GcsLockRegistry registry(Duration ttl, Duration refresh, Duration operationTimeout, int maxFailures) {
        return registry(b -> b.ttl(ttl).refreshInterval(refresh).operationTimeout(operationTimeout).maxRefreshFailures(maxFailures)
                .listener(new LockEventListener() {
                    @Override
                    public void refreshed(Lease lease) {
                        refreshed.computeIfAbsent(lease.name(), n -> new AtomicInteger()).incrementAndGet();
                    }

                    @Override
                    public void lost(Lease lease, LockLostException reason) {
                        lost.put(lease.name(), reason.getMessage());
                    }

                    @Override
                    public void released(Lease lease) {
                        released.computeIfAbsent(lease.name(), n -> new CountDownLatch(1)).countDown();
                    }
                }));
    }

    private int refreshes(String name) {
        AtomicInteger n = refreshed.get(name);
        return n == null ? 0 : n.get();
    }

    /**
     * Every PATCH of lock {@code name} is held in the emulator (each until its own latch opens) until
     * {@link HeldPatches#stopHolding}: a lease whose refreshes all hang, and each of them can be let through alone.
     */
    private HeldPatches holdEveryPatch(String name) {
        HeldPatches held = new HeldPatches();
        gcs.faults().beforeNext(Operation.PATCH, "gcslock/" + name, new Runnable() {
            @Override
            public void run() {
                CountDownLatch mine = new CountDownLatch(1);
                held.add(mine);
                if (held.holding) {
                    gcs.faults().beforeNext(Operation.PATCH, "gcslock/" + name, this);
                }
                try {
                    mine.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        return held;
    }

    /** The latches of the PATCHes held so far, oldest first. */
    private static final class HeldPatches extends java.util.concurrent.CopyOnWriteArrayList<CountDownLatch> {
        private volatile boolean holding = true;

        /** The PATCHes sent from now on go through. */
        void stopHolding() {
            holding = false;
        }

        void letAllGo() {
            forEach(CountDownLatch::countDown);
        }
    }

    /** Holds the next PATCH of lock {@code name} until {@code release} opens; counts it into {@code arrived}. */
    private void holdNextPatch(String name, CountDownLatch arrived, CountDownLatch release) {
        gcs.faults().beforeNext(Operation.PATCH, "gcslock/" + name, () -> {
            arrived.countDown();
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Holds every PATCH of lock {@code name} until {@code release} opens (each one counted into {@code arrived}). */
    private void holdEveryPatch(String name, CountDownLatch arrived, CountDownLatch release) {
        gcs.faults().beforeNext(Operation.PATCH, "gcslock/" + name, new Runnable() {
            @Override
            public void run() {
                if (release.getCount() > 0) {
                    gcs.faults().beforeNext(Operation.PATCH, "gcslock/" + name, this); // the next one too
                }
                arrived.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    /**
     * The interleaving (measured by a review on the fixed pool of 2 refresher threads): the refresh PATCHes of a
     * few leases hang (their replies take longer than anything else, up to the operation timeout) and occupy
     * every refresher thread; the refresh of another lease of the same registry, whose own request would be
     * answered at once, waits behind them — for long enough, until its deadline passes and it is lost while
     * GCS answers it normally. Here four leases' refreshes are held in flight at once, for as long as the
     * test likes (30 s operation timeout); meanwhile the fifth lease must go on being refreshed, each refresh
     * costing it only its own request.
     */
    @Test
    void aSlowRefreshOfOneLeaseNeverDelaysAnothersRefresh() {
        GcsLockRegistry r = registry(Duration.ofSeconds(60), Duration.ofMillis(300), Duration.ofSeconds(30));
        int slow = 4;
        CountDownLatch arrived = new CountDownLatch(slow);
        CountDownLatch release = new CountDownLatch(1);
        List<Lease> slowLeases = new ArrayList<>();
        for (int i = 0; i < slow; i++) {
            holdNextPatch("slow-" + i, arrived, release);
            slowLeases.add(r.tryAcquire("slow-" + i).orElseThrow());
        }
        Lease fast = r.tryAcquire("fast").orElseThrow();
        try {
            // At least two slow refreshes hang (as many as a fixed pool of 2 threads would have had busy)...
            await("at least two slow leases' refreshes to be held in GCS")
                    .atMost(Duration.ofSeconds(60)).until(() -> arrived.getCount() <= slow - 2);
            int before = refreshes("fast");
            // ...and the fast lease is refreshed meanwhile, again and again, each time with its own request only.
            await("the fast lease is refreshed while other leases' refreshes hang")
                    .atMost(Duration.ofSeconds(20)).until(() -> refreshes("fast") >= before + 3);
            // Every slow lease's refresh got a thread of its own: none waited behind another.
            await("every slow lease's refresh to reach GCS, none queued behind another")
                    .atMost(Duration.ofSeconds(60)).until(() -> arrived.getCount() == 0);
            assertThat(release.getCount()).as("every slow refresh was still in flight").isEqualTo(1);
            assertThat(slowLeases).allMatch(l -> refreshes(l.name()) == 0);
        } finally {
            release.countDown();
        }
        // The held PATCHes commit; their replies reach their clients within the operation timeout.
        await("every slow lease's refresh to be confirmed after GCS let them through")
                .atMost(Duration.ofSeconds(60)).until(() -> slowLeases.stream().allMatch(l -> refreshes(l.name()) >= 1));
        assertThat(slowLeases).allMatch(Lease::isHealthy);
        assertThat(fast.isHealthy()).isTrue();
        assertThat(lost).isEmpty();
    }

    /**
     * The interleaving: every refresh PATCH of a lease hangs (each until the client gives up after its
     * operation timeout; the next one hangs too) past the lease's deadline, then they all commit or meet 412.
     * The deadline timer must declare the lease lost at its deadline while a PATCH is still in flight (rule 11:
     * it never waits for refresh I/O; the failure count, set high here, does not trip first), the late commit
     * must not revive it (LOST is final), its release must still delete our object (rule 12: the guarded DELETE
     * meets 412 after the late refresh, the object is read and is still ours), and another lease of the
     * registry is refreshed all along.
     */
    @Test
    void theDeadlineFiresWhileARefreshIsInFlightAndTheLateCommitDoesNotReviveTheLease() {
        // TTL 3 s: deadline 2.4 s after the last confirmed write; each PATCH gives up after 1 s; 9 failures
        // would take longer than the deadline.
        GcsLockRegistry r = registry(Duration.ofSeconds(3), Duration.ofMillis(300), Duration.ofSeconds(1), 9);
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        holdEveryPatch("doomed", arrived, release);
        Lease doomed = r.tryAcquire("doomed").orElseThrow();
        Lease fast = r.tryAcquire("fast").orElseThrow();
        try {
            await("the doomed lease's refresh to be held in GCS")
                    .atMost(Duration.ofSeconds(30)).until(() -> arrived.getCount() == 0);
            int before = refreshes("fast");
            await("lost at its deadline while its PATCHes are held").atMost(Duration.ofSeconds(10))
                    .until(() -> lost.containsKey("doomed"));
            assertThat(lost.get("doomed")).contains("no refresh was confirmed within");
            await("the fast lease to be refreshed twice after the doomed one was lost")
                    .atMost(Duration.ofSeconds(30)).until(() -> refreshes("fast") >= before + 2);
        } finally {
            release.countDown();
        }
        await("one of the doomed lease's held PATCHes to commit")
                .atMost(Duration.ofSeconds(30)).until(() -> object("doomed").getMetageneration() >= 2); // one committed
        assertThat(doomed.isHealthy()).isFalse();
        assertThatThrownBy(doomed::checkHealthy).isInstanceOf(LockLostException.class);
        assertThat(refreshes("doomed")).as("no refresh of the lost lease is reported").isZero();
        doomed.release();
        assertThat(object("doomed")).as("a lost lease's release still deletes our own object").isNull();
        assertThat(fast.isHealthy()).isTrue();
        assertThat(lost).containsOnlyKeys("doomed");
    }

    /**
     * The interleaving: every refresh PATCH of a lease hangs past its deadline, so the deadline timer declares it
     * lost while one is in flight. Then the oldest held PATCH commits, and the one still in flight meets 412; its
     * read finds our own earlier refresh in the object (rule 8). A LOST lease stays lost: that adoption must not
     * confirm it nor report a refresh. Events of one lock arrive in order (rule 20), so once {@code released}
     * has arrived, a wrongly reported {@code refreshed} would have arrived before it. (If the in-flight PATCH's
     * client gives up before the test lets it through, the 412 is never read and the test proves less, never
     * more.)
     */
    @Test
    void aRefreshThatMeets412AfterItsLeaseWasLostDoesNotReviveItOrReportARefresh() throws Exception {
        // TTL 6 s: deadline 4.8 s after the last confirmed write; each PATCH gives up after 2 s.
        GcsLockRegistry r = registry(Duration.ofSeconds(6), Duration.ofMillis(300), Duration.ofSeconds(2), 19);
        HeldPatches held = holdEveryPatch("late");
        Lease lease = r.tryAcquire("late").orElseThrow();
        await("the lease to be lost while its PATCHes are held")
                .atMost(Duration.ofSeconds(60)).until(() -> lost.containsKey("late"));
        held.stopHolding();
        held.get(0).countDown(); // the oldest held PATCH commits: our refresh id is in the object
        await("the oldest held PATCH to commit (metageneration 2)")
                .atMost(Duration.ofSeconds(30)).until(() -> object("late").getMetageneration() == 2);
        held.letAllGo(); // the rest meet 412, the one in flight among them
        lease.release(); // waits for a refresh in flight; its events come before 'released'
        assertThat(released.computeIfAbsent("late", n -> new CountDownLatch(1)).await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(refreshes("late")).as("no refresh of the lost lease is reported").isZero();
        assertThat(lease.isHealthy()).isFalse();
        assertThat(object("late")).as("its release still deletes our own object").isNull();
    }

    /**
     * Rule 11, LOST is final, for a refresh whose 200 comes after the deadline declared the loss: the confirmation is
     * refused (no {@code refreshed} after {@code lost}, the lease stays unhealthy). The check and the confirmation are one
     * step under the lease's monitor ({@code GcsLease#confirmRefresh}): the interleaving explorer found the window
     * between them (the deadline timer marking the loss there), which a test of real threads cannot aim at; this test
     * holds the confirmation to the check.
     */
    @Test
    void aRefreshWhoseReplyComesAfterItsLeaseWasLostDoesNotReviveItOrReportARefresh() throws Exception {
        // TTL 6 s: deadline 4.8 s after the create's send; each PATCH gives up after 2 s, so the third is in flight then.
        GcsLockRegistry r = registry(Duration.ofSeconds(6), Duration.ofMillis(300), Duration.ofSeconds(2), 19);
        HeldPatches held = holdEveryPatch("late-200");
        Lease lease = r.tryAcquire("late-200").orElseThrow();
        try {
            await("the lease to be lost at its deadline while its PATCHes are held")
                    .atMost(Duration.ofSeconds(60)).until(() -> lost.containsKey("late-200"));
            held.stopHolding();
            held.get(held.size() - 1).countDown(); // the PATCH in flight commits, and its call gets 200
            await("the PATCH in flight to commit (metageneration 2)")
                    .atMost(Duration.ofSeconds(30)).until(() -> object("late-200").getMetageneration() == 2);
            lease.release(); // waits for a refresh in flight; its events come before 'released'
            assertThat(released.computeIfAbsent("late-200", n -> new CountDownLatch(1)).await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(lost.get("late-200")).contains("no refresh was confirmed");
            assertThat(refreshes("late-200")).as("no refresh of the lost lease is reported").isZero();
            assertThat(lease.isHealthy()).isFalse();
        } finally {
            held.letAllGo();
        }
    }

    /**
     * The interleaving: a lease's refresh PATCH is in flight (held in the emulator) when the application closes
     * the registry. {@code close()} must let that refresh finish, then release the lease — deleting its object,
     * which the late refresh moved on by one metageneration (rule 12: the guarded DELETE meets 412, the object
     * is read and is still ours) — and only then return (rule 14).
     */
    @Test
    void closeWaitsForARefreshInFlightAndStillDeletesTheObject() throws Exception {
        GcsLockRegistry r = registry(Duration.ofSeconds(30), Duration.ofMillis(300), Duration.ofSeconds(20));
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        holdNextPatch("job", arrived, release);
        Lease lease = r.tryAcquire("job").orElseThrow();
        await("the lease's refresh to be held in GCS")
                .atMost(Duration.ofSeconds(30)).until(() -> arrived.getCount() == 0);
        AtomicBoolean closeReturned = new AtomicBoolean();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(() -> {
            r.close();
            closeReturned.set(true);
        });
        await("close() to refuse new acquisitions while a refresh is in flight")
                .atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThatThrownBy(() -> r.tryAcquire("other")).hasMessageContaining("closed"));
        assertThat(closeReturned).as("close() waits for the lease's release, which waits for the refresh").isFalse();
        release.countDown();
        closing.get(30, TimeUnit.SECONDS);
        assertThat(object("job")).as("close() returned: our object must be gone").isNull();
        assertThat(lease.isHealthy()).isFalse();
    }

    /**
     * README "Scale": the registry states the GCS writes per second its held leases need (one PATCH per lease per
     * refresh interval) and logs one WARN when that approaches its share of a bucket's ~1,000 writes/s — not one
     * per acquisition above the threshold, and again only after falling well below it.
     */
    @Test
    void theRefreshRateCountsHeldLeasesAndWarnsOnceNearTheBucketsWriteBudget() {
        Logger logger = (Logger) LoggerFactory.getLogger(RefreshRateWarning.class);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        logger.addAppender(logs);
        try {
            // 200 ms interval: 5 writes/s per lease; warn at 1 % of 1,000/s = 10/s, i.e. at the second lease.
            GcsLockRegistry r = registry(b -> b.refreshRateWarningShare(0.01));
            Lease a = r.tryAcquire("a").orElseThrow();
            assertThat(r.refreshRate()).isCloseTo(5.0, within(0.01));
            assertThat(logs.list).isEmpty();
            Lease b = r.tryAcquire("b").orElseThrow();
            Lease c = r.tryAcquire("c").orElseThrow();
            assertThat(r.refreshRate()).isCloseTo(15.0, within(0.01));
            assertThat(logs.list).singleElement().satisfies(e -> {
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
                assertThat(e.getFormattedMessage()).contains("2 lock(s)", "10 writes/s", "bucket 'locks'",
                        "gcslock.refresh-rate-warning-share", "Scale");
            });
            b.release();
            c.release();
            assertThat(r.refreshRate()).isCloseTo(5.0, within(0.01));
            r.tryAcquire("d").orElseThrow();
            assertThat(logs.list).as("above the threshold again after falling below 80 % of it").hasSize(2);
            a.release();
        } finally {
            logger.detachAppender(logs);
        }
    }

    @Test
    void aLostLeaseLeavesTheRefreshRateWhenItsRefreshChainEnds() {
        GcsLockRegistry r = registry();
        Lease lease = r.tryAcquire("gone").orElseThrow();
        assertThat(r.refreshRate()).isCloseTo(5.0, within(0.01));
        storage.delete(com.google.cloud.storage.BlobId.of(BUCKET, "gcslock/gone")); // an administrator deletes it: rule 9
        await("the lease to be lost after its object was deleted")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        await("the lost lease to leave the refresh rate")
                .atMost(Duration.ofSeconds(30)).until(() -> r.refreshRate() == 0);
    }
}
