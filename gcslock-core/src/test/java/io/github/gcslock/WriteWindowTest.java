package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * DESIGN.md rule 21: no write of this process to one lock object (a refresh, a renewal, the release) is sent within
 * {@code writeRateWindow} of its previous write to that object, counted from the previous write's send and, once
 * its call has returned, from then (the write may have committed at any moment in between). The emulator enforces
 * the same window ({@code writeRateLimit}) and counts every 429 it answers; each test asserts none was answered,
 * which only holds if the engine waited. Interleavings: refreshes asked for more often than the window allows; a
 * renewal right after a refresh; a release right after a refresh; a refresh whose reply comes late but commits;
 * refreshes that fail, spaced by the window, still losing the lease by the failure count before its deadline.
 */
class WriteWindowTest extends EmulatorTestBase {

    private static final Duration WINDOW = Duration.ofMillis(300);

    private final Map<String, AtomicInteger> refreshed = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> nextRefresh = new ConcurrentHashMap<>();

    @BeforeEach
    void windowOn() {
        gcs.writeRateLimit(WINDOW);
    }

    /** TTL 2 s (deadline 1.6 s: three windows fit), refreshes asked for every 50 ms, operation timeout 1 s. */
    private GcsLockRegistry windowed() {
        return windowed(Duration.ofSeconds(2));
    }

    /** As {@link #windowed()}, with another TTL. */
    private GcsLockRegistry windowed(Duration ttl) {
        return registry(b -> b.ttl(ttl).refreshInterval(Duration.ofMillis(50))
                .operationTimeout(Duration.ofSeconds(1)).writeRateWindow(WINDOW)
                .listener(new LockEventListener() {
                    @Override
                    public void refreshed(Lease lease) {
                        refreshed.computeIfAbsent(lease.name(), n -> new AtomicInteger()).incrementAndGet();
                        CountDownLatch l = nextRefresh.remove(lease.name());
                        if (l != null) {
                            l.countDown();
                        }
                    }
                }));
    }

    private int refreshes(String name) {
        AtomicInteger n = refreshed.get(name);
        return n == null ? 0 : n.get();
    }

    /** Waits for the next confirmed refresh of {@code name} (the listener runs after its PATCH returned). */
    private void awaitNextRefresh(String name) throws InterruptedException {
        CountDownLatch l = new CountDownLatch(1);
        nextRefresh.put(name, l);
        assertThat(l.await(10, TimeUnit.SECONDS)).as("a refresh of %s within 10 s", name).isTrue();
    }

    @Test
    void refreshesAskedForMoreOftenThanTheWindowAllowsComeOnePerWindowWithout429() throws Exception {
        GcsLockRegistry r = windowed();
        Lease lease = r.acquire("job", Duration.ZERO);
        await("4 refreshes, one per write window").atMost(Duration.ofSeconds(60)).until(() -> refreshes("job") >= 4);
        long patches = gcs.faults().requestCount(Operation.PATCH);
        assertThat(gcs.faults().rateLimited()).as("writes GCS refused for its write limit (429)").isZero();
        assertThat(lease.isHealthy()).isTrue();
        // One PATCH per confirmed refresh: no 429 retried by the client, no refresh every 50 ms.
        assertThat(patches).isLessThanOrEqualTo(refreshes("job") + 1L);
        lease.release();
        assertThat(gcs.faults().rateLimited()).isZero();
        assertThat(object("job")).isNull();
    }

    @Test
    void aRenewalRightAfterARefreshWaitsOutTheWindow() throws Exception {
        GcsLockRegistry r = windowed();
        Lease lease = r.acquire("job", Duration.ZERO);
        awaitNextRefresh("job");
        r.renew(lease, Duration.ofSeconds(3)); // returns only with its own write in the object
        assertThat(object("job").getMetadata()).containsEntry("gcslock-ttl", "3000");
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        lease.release();
        assertThat(object("job")).isNull();
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
    }

    @Test
    void aReleaseRightAfterARefreshWaitsOutTheWindowAndDeletesWithOneRequest() throws Exception {
        GcsLockRegistry r = windowed();
        Lease lease = r.acquire("job", Duration.ZERO);
        awaitNextRefresh("job");
        lease.release();
        assertThat(object("job")).isNull();
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        assertThat(gcs.faults().requestCount(Operation.DELETE)).as("DELETEs").isEqualTo(1);
    }

    @Test
    void aReleaseRightAfterTheCreateWaitsOutTheWindow() throws Exception {
        GcsLockRegistry r = windowed();
        r.acquire("job", Duration.ZERO).release();
        assertThat(object("job")).isNull();
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        assertThat(gcs.faults().requestCount(Operation.DELETE)).as("DELETEs").isEqualTo(1);
    }

    /**
     * A refresh whose reply comes late but which commits at the end (held back in the emulator, shorter than the
     * operation timeout): the next write must count its window from when that call returned, not from its send.
     *
     * <p>TTL 5 s, not 2 s. Rule 11 comes before rule 21: a refresh is sent no later than its deadline minus one call
     * bound, even inside the window (LeaseKeeper#windowWaitEnd). Counted from the held refresh's send s: the window
     * after it ends at s + 500 ms (the hold) + d + 300 ms, where d is the machine's delay between the emulator's commit
     * and the call's return; rule 11's latest send is s + deadline - call bound. With TTL 2 s that is s + 1.6 s - 0.67 s
     * = s + 933 ms, so any d over 133 ms sent the next refresh inside the window, by design, and GCS answered 429
     * (failed 1 run in 4 under load). With TTL 5 s it is s + 4 s - 1 s = s + 3 s: d may reach 2.2 s. A refresh whose
     * window counted from its send (the defect pinned here) is followed at once, whatever the TTL: 429.
     */
    @Test
    void theWindowCountsFromTheEndOfACallWhoseWriteCommittedLate() throws Exception {
        GcsLockRegistry r = windowed(Duration.ofSeconds(5));
        Lease lease = r.acquire("job", Duration.ZERO);
        awaitNextRefresh("job");
        CountDownLatch held = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.PATCH, "gcslock/job", () -> {
            held.countDown();
            try {
                Thread.sleep(WINDOW.toMillis() + 200); // longer than the window, shorter than the operation timeout
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        int before = refreshes("job");
        await("3 more refreshes after the one held past the window")
                .atMost(Duration.ofSeconds(60)).until(() -> refreshes("job") >= before + 3);
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        assertThat(lease.isHealthy()).isTrue();
    }

    /**
     * A stale takeover deletes the dead holder's object and creates its own: two writes of ours to one object, so
     * the create waits a window after the DELETE (without it GCS answered 429 and the client retried).
     */
    @Test
    void aStaleTakeoverCreatesAWindowAfterItsOwnDelete() throws Exception {
        List<LockInfo> takeovers = new CopyOnWriteArrayList<>();
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(2)).writeRateWindow(WINDOW).listener(new LockEventListener() {
            @Override
            public void tookOver(String name, LockInfo staleHolder) {
                takeovers.add(staleHolder);
            }
        }));
        plantForeignLock("job", Duration.ofMillis(300));
        Lease lease = r.acquire("job", Duration.ofSeconds(10));
        assertThat(takeovers).hasSize(1);
        assertThat(lease.isHealthy()).isTrue();
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
    }

    /**
     * Refreshes that fail, each a window after the last: the failure count (rule 10) still loses the lease before its
     * deadline (rule 11), as the build-time check promises (3 windows of 300 ms + 3 failing calls < 1.6 s).
     */
    @Test
    void failingRefreshesSpacedByTheWindowLoseTheLeaseByTheFailureCountBeforeItsDeadline() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(3)).refreshInterval(Duration.ofMillis(50))
                .operationTimeout(Duration.ofMillis(100)).writeRateWindow(WINDOW));
        Lease lease = r.acquire("job", Duration.ZERO);
        gcs.faults().failNext(10_000, 503, Operation.PATCH);
        await("the lease to be lost by its failure count")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        assertThat(lease.lostReason()).hasValueSatisfying(s -> assertThat(s).contains("3 consecutive refreshes failed"));
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
    }

    /**
     * An administrator forces out a lease of this very registry a moment after its create: the forced delete waits out
     * the write window (rule 21) instead of meeting GCS's 429 (found by EngineExplorerPropertyTest's wire oracle:
     * "DELETE of gcslock/a met 429: its own previous write (INSERT, 14 ms before it was sent)").
     */
    @Test
    void aForcedDeleteOfOurOwnLeaseRightAfterItsCreateWaitsOutTheWindowWithout429() throws Exception {
        GcsLockRegistry r = windowed();
        Lease lease = r.acquire("job", Duration.ZERO);
        // The forced delete waits out the window after the lease's last write; the lease's next refresh (50 ms
        // interval, also a window apart) may go first and move the metageneration the administrator read: then the
        // delete is refused (false, the documented answer to a stale view) and the administrator reads again. On a
        // loaded machine that race was lost now and then (1 run in 4).
        boolean forced = false;
        for (int i = 0; i < 10 && !forced; i++) {
            LockInfo info = r.inspect("job").orElseThrow();
            forced = r.forceRelease("job", info.fencingToken(), info.metageneration());
        }
        assertThat(forced).isTrue();
        assertThat(gcs.faults().rateLimited()).as("writes GCS refused for its write limit (429)").isZero();
        assertThat(object("job")).isNull();
        await("the forced-out holder to find out").atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        lease.release();
        assertThat(gcs.faults().rateLimited()).isZero();
    }

    /**
     * Rule 21 for a create of ours whose lease is not handed out yet: the acquiring thread is still in a request
     * listener, so the lease is not among the registry's live leases. Found by {@code EngineInterleavingExplorerTest}
     * (issue 29): "p1 wrote 'x' (delete) PT0.673S after its previous write to it". Before the fix the forced delete went
     * out at once and GCS refused it with 429 (retried by the client).
     */
    @Test
    void aForcedDeleteOfOurOwnCreateWhoseLeaseIsNotHandedOutYetWaitsOutTheWindowWithout429() throws Exception {
        java.util.concurrent.CountDownLatch answered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch letGo = new java.util.concurrent.CountDownLatch(1);
        // A window far longer than the inspect and the forced delete take, so that without the wait the DELETE always
        // meets it, however slow the machine.
        Duration window = Duration.ofMillis(1_500);
        gcs.writeRateLimit(window);
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(8)).refreshInterval(Duration.ofSeconds(2))
                .writeRateWindow(window).listener(new LockEventListener() {
                    @Override
                    public void requestAnswered(String name) {
                        if (Thread.currentThread().getName().equals("acquirer") && answered.getCount() > 0) {
                            answered.countDown();
                            try {
                                letGo.await(20, java.util.concurrent.TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }
                }));
        java.util.concurrent.CompletableFuture<java.util.Optional<Lease>> acquired = new java.util.concurrent.CompletableFuture<>();
        Thread acquirer = new Thread(() -> {
            try {
                acquired.complete(r.tryAcquire("job"));
            } catch (Throwable e) {
                acquired.completeExceptionally(e);
            }
        }, "acquirer");
        acquirer.start();
        assertThat(answered.await(20, java.util.concurrent.TimeUnit.SECONDS)).as("the create answered").isTrue();
        LockInfo info = r.inspect("job").orElseThrow();
        assertThat(r.forceRelease("job", info.fencingToken(), info.metageneration())).isTrue();
        assertThat(gcs.faults().rateLimited()).as("writes GCS refused for its write limit (429)").isZero();
        letGo.countDown();
        acquired.get(20, java.util.concurrent.TimeUnit.SECONDS).ifPresent(Lease::release);
    }
}
