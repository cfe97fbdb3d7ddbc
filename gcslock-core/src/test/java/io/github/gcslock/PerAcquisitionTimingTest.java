package io.github.gcslock;

import com.google.cloud.storage.Storage;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leases with their own TTL keep the registry's timing rules (found by an independent review): every GCS
 * call made for a lease is bounded by the smaller of the registry's operation timeout and the lease's
 * TTL/3 (DESIGN.md rule 15), and a lease whose acquiring reply arrives past its deadline is never handed
 * out (rule 11). With the registry's 10 s timeout, a lease with a 1–2 s TTL (a ShedLock lockAtMostFor)
 * could wait on one call longer than its whole deadline span and still count it as a success.
 */
class PerAcquisitionTimingTest extends EmulatorTestBase {

    private static final Duration LONG_TTL = Duration.ofSeconds(30);

    /** A registry with the long TTL and the DEFAULT operation timeout that follows from it (10 s). */
    private GcsLockRegistry longTtlRegistry(Storage client) {
        return build(GcsLockRegistry.builder(client, BUCKET).ttl(LONG_TTL).refreshInterval(Duration.ofSeconds(3))
                .maxRefreshFailures(3));
    }

    private final List<GcsLockRegistry> mine = new ArrayList<>();

    /** Test defaults of EmulatorTestBase, except the operation timeout, which is left at its default. */
    private GcsLockRegistry build(GcsLockRegistry.Builder b) {
        GcsLockRegistry r = b.writeRateWindow(Duration.ofMillis(20)).backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0).build();
        mine.add(r);
        return r;
    }

    @AfterEach
    void closeMine() {
        gcs.faults().reset();
        mine.forEach(GcsLockRegistry::close);
    }

    /**
     * Control for the next test: with the same 2 s TTL as the registry's own, the default operation timeout
     * is 667 ms, so one refresh whose reply hangs 3 s times out, the next refresh meets 412, recognises its
     * own committed refresh and the lease stays healthy. (Passes.)
     */
    @Test
    void controlARegistryTtlLeaseSurvivesOneHungRefreshReply() {
        GcsLockRegistry a = build(GcsLockRegistry.builder(gcs.storage("a"), BUCKET).ttl(Duration.ofSeconds(2)).maxRefreshFailures(3));
        Lease lease = a.tryAcquire("hung-refresh").orElseThrow();
        assertHealthyAcrossOneHungRefresh(lease);
    }

    /**
     * Interleaving: a lease with its own 2 s TTL (refresh every 250 ms, deadline span 1.6 s) from a registry
     * whose TTL is 30 s (operation timeout 10 s). One refresh PATCH commits but its reply hangs for 3 s. With
     * the 10 s operation timeout the refresher waits for that reply for 3 s (holding the lease's io lock, so
     * no later refresh can run), and the deadline timer rightly declares the lease lost at 1.6 s — although
     * GCS accepted every write and the network recovered at once. DESIGN.md's table says of operationTimeout
     * "a hung call must fail well before the deadline so the next refresh can still run": for a
     * per-acquisition TTL it does not.
     *
     * <p>Expected: the same behaviour as a registry whose own TTL is 2 s (the control above): the call is
     * bounded by the lease's TTL/3, the next refresh adopts the committed one, the lease stays healthy.
     */
    @Test
    void aShortPerAcquisitionTtlLeaseSurvivesOneHungRefreshReplyLikeARegistryTtlLease() {
        GcsLockRegistry a = longTtlRegistry(gcs.storage("a"));
        Lease lease = a.tryAcquire("hung-refresh", Duration.ofSeconds(2)).orElseThrow();
        assertHealthyAcrossOneHungRefresh(lease);
    }

    private void assertHealthyAcrossOneHungRefresh(Lease lease) {
        assertThat(lease.isHealthy()).isTrue();
        Instant before = lease.lastRefreshAt();
        await("the lease to be refreshed normally once")
                .atMost(Duration.ofSeconds(30)).until(() -> lease.lastRefreshAt().isAfter(before)); // refreshing normally
        AtomicReference<String> lost = new AtomicReference<>();
        lease.onLost((l, e) -> lost.compareAndSet(null, e.getMessage()));
        gcs.faults().client("a").slowReplies(1, Duration.ofSeconds(3));
        await("the refresh whose reply hangs to be sent")
                .atMost(Duration.ofSeconds(30)).until(() -> gcs.faults().client("a").slowedReplies() == 1);
        sleep(4000); // the hung reply comes back; a bounded call would have let later refreshes run meanwhile
        assertThat(lost.get()).as("lease lost because one refresh reply hung").isNull();
        assertThat(lease.isHealthy()).as("healthy after one hung refresh reply: %s", lease.lostReason().orElse("-")).isTrue();
        lease.release();
    }

    /**
     * The interleaving: A sends a create for a lease with its own 1 s TTL (deadline 0.8 s). GCS commits it,
     * but A's thread gets the reply only after the deadline (a slow reply within the timeout, or a thread
     * starved on a loaded machine — here the ticker jumps 2 s while the create is in flight). Others may
     * already judge the object stale by its 1 s TTL and take it over. Handing the lease out — even as an
     * unhealthy one — lets a caller that does not check (ShedLock's provider returned it as a lock) run its
     * job beside the next holder. Expected: the late object deleted (guarded) and a fresh
     * create; only a healthy lease is handed out.
     */
    @Test
    void aLeaseWhoseCreateReplyArrivesPastItsDeadlineIsNotHandedOut() {
        long[] shift = {0};
        GcsLockRegistry a = build(GcsLockRegistry.builder(gcs.storage("a"), BUCKET).ttl(LONG_TTL)
                .refreshInterval(Duration.ofSeconds(3)).ticker(() -> System.nanoTime() + shift[0]));
        gcs.faults().beforeNext(Operation.INSERT, () -> shift[0] += Duration.ofSeconds(2).toNanos());

        Optional<Lease> lease = a.tryAcquire("late-reply", Duration.ofSeconds(1));

        // The late object is deleted and the attempt creates again at once; what it hands out is fresh.
        assertThat(lease).as("a lease is handed out only when it is healthy").hasValueSatisfying(
                l -> assertThat(l.isHealthy()).as("handed out past its deadline: %s", l.lostReason().orElse("-")).isTrue());
        assertThat(gcs.faults().requestCount(Operation.INSERT)).as("the late create and the one after it").isEqualTo(2);
    }
    /**
     * The same late reply on a thread interrupted while its create was in flight (a cancelled task), and the DELETE of
     * the late object meets 503 once. The call may end at that interrupt, and then nothing else deletes the object: no
     * lease of it exists, so not even close() would, and other processes wait out its TTL. Before: the delete ran with
     * the flag set, the client's retry backoff was interrupted, and the object stayed (the interleaving explorer's
     * find on the unmutated engine, issue 29: every registry closed with such an object in the bucket). Expected: the
     * late object deleted, as a release's object is (rule 12), and the interrupt given back to the caller.
     */
    @Test
    void theLateObjectOfAnInterruptedCallIsDeletedAndTheInterruptGivenBack() {
        long[] shift = {0};
        GcsLockRegistry a = build(GcsLockRegistry.builder(gcs.storage("a"), BUCKET).ttl(LONG_TTL)
                .refreshInterval(Duration.ofSeconds(3)).ticker(() -> System.nanoTime() + shift[0]));
        Thread caller = Thread.currentThread();
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos(); // the reply arrives past the 0.8 s deadline
            caller.interrupt(); // the caller is cancelled while its create is in flight
        });
        gcs.faults().failNext(1, 503, Operation.DELETE); // the late object's DELETE: the client retries it after a backoff

        Optional<Lease> lease = Optional.empty();
        Throwable failure = null;
        try {
            lease = a.tryAcquire("late-interrupted", Duration.ofSeconds(1));
        } catch (GcsLockException e) {
            failure = e;
        }
        boolean flag = Thread.interrupted();

        assertThat(flag || (failure != null && failure.getCause() instanceof InterruptedException))
                .as("the interrupt is given back (flag set, or the call ended with an InterruptedException cause): %s", failure)
                .isTrue();
        assertThat(gcs.faults().successfulRequestCounts().getOrDefault(Operation.DELETE, 0L))
                .as("the late object's guarded DELETE went through despite the interrupt").isEqualTo(1);
        lease.ifPresent(Lease::release);
        assertThat(object("late-interrupted")).as("nothing of the call is left in the bucket").isNull();
    }
}
