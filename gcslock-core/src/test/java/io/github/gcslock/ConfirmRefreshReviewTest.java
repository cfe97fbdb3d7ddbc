package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Review of b1d5376 (rule 11, {@code GcsLease#confirmRefresh}): a refresh's confirmation and the deadline's loss in one
 * step, and the new refusal of a reply that comes after the deadline although the deadline timer has not fired. Each
 * test holds a PATCH in the emulator on a latch and moves the registry's ticker (a process pause, as
 * {@code AlgorithmRulesTest#aPausedHolderSeesItsLeaseUnhealthyOnItsFirstCheck} does), so the interleaving is forced in
 * causal order, not raced against the wall clock. Bounds are for liveness only.
 */
class ConfirmRefreshReviewTest extends EmulatorTestBase {

    private static final Duration LONG_TTL = Duration.ofSeconds(20);

    /** The registry's ticker: real time plus a shift the test moves (a pause of the whole process). */
    private final AtomicLong shift = new AtomicLong();
    private final Map<String, AtomicInteger> refreshed = new ConcurrentHashMap<>();
    private final Map<String, List<String>> lost = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> released = new ConcurrentHashMap<>();

    private GcsLockRegistry shiftedRegistry() {
        return registry(b -> b.ttl(LONG_TTL).refreshInterval(Duration.ofSeconds(2)).operationTimeout(Duration.ofSeconds(10))
                .ticker(() -> System.nanoTime() + shift.get())
                .listener(new LockEventListener() {
                    @Override
                    public void refreshed(Lease lease) {
                        refreshed.computeIfAbsent(lease.name(), n -> new AtomicInteger()).incrementAndGet();
                    }

                    @Override
                    public void lost(Lease lease, LockLostException reason) {
                        lost.computeIfAbsent(lease.name(), n -> new CopyOnWriteArrayList<>()).add(reason.getMessage());
                    }

                    @Override
                    public void released(Lease lease) {
                        releasedLatch(lease.name()).countDown();
                    }
                }));
    }

    private CountDownLatch releasedLatch(String name) {
        return released.computeIfAbsent(name, n -> new CountDownLatch(1));
    }

    private int refreshes(String name) {
        AtomicInteger n = refreshed.get(name);
        return n == null ? 0 : n.get();
    }

    /** Holds the next PATCH of lock {@code name} (it commits only when {@code go} opens); {@code arrived} when it is held. */
    private void holdNextPatch(String name, CountDownLatch arrived, CountDownLatch go) {
        gcs.faults().beforeNext(Operation.PATCH, "gcslock/" + name, () -> {
            arrived.countDown();
            try {
                go.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private static GcsLease gcsLease(Lease lease) {
        return lease instanceof ReentrantHold hold ? hold.lease() : (GcsLease) lease;
    }

    /**
     * The interleaving: the lease's scheduled refresh PATCH is in flight (held in GCS) when the application calls
     * {@code release()}; the release stops the refreshes, cancels the deadline timer (rule 12: it waits for the refresh
     * in flight, whose metageneration it needs) and waits for the I/O lock. The process is then paused past the lease's
     * deadline (or GCS is slow: the release waits up to the call bound); GCS answers the PATCH 200. Before b1d5376 the
     * refresh was confirmed and the release deleted the object: no loss, as for every other path of a lease whose
     * release has begun (the deadline timer skips a releasing lease, {@code isHealthy()} says false without declaring a
     * loss, {@code heldLeases()} leaves it out). On b1d5376 {@code confirmRefresh} finds the deadline passed and calls
     * {@code markLost}: every listener and {@code onLost} listener is told {@code lost} for a lease the application
     * released itself (the Spring meter {@code gcslock.lost}, "leases lost while held", counts it; an on-call alert
     * fires), and the released lease reports a lost reason.
     */
    @Test
    void aReleaseWaitingForARefreshAnsweredPastTheDeadlineIsNotReportedLost() throws Exception {
        GcsLockRegistry r = shiftedRegistry();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        holdNextPatch("rel", arrived, go);
        Lease lease = r.tryAcquire("rel").orElseThrow();
        List<String> toldOnLost = new CopyOnWriteArrayList<>();
        lease.onLost((l, e) -> toldOnLost.add(e.getMessage()));
        CompletableFuture<Void> releasing;
        try {
            await("the lease's first refresh to be held in GCS").atMost(Duration.ofSeconds(30)).until(() -> arrived.getCount() == 0);
            releasing = CompletableFuture.runAsync(lease::release);
            await("release() to begin (it then waits for the refresh in flight)")
                    .atMost(Duration.ofSeconds(30)).until(() -> gcsLease(lease).isReleasing());
            assertThat(r.heldLeases()).as("a lease whose release began is not held").isEmpty();
            shift.addAndGet(LONG_TTL.toNanos()); // paused past the deadline while the release waits for the refresh
        } finally {
            go.countDown(); // GCS commits the PATCH and answers 200
        }
        releasing.get(30, TimeUnit.SECONDS);
        assertThat(releasedLatch("rel").await(30, TimeUnit.SECONDS)).as("released told").isTrue();
        assertThat(object("rel")).as("the release deleted our object").isNull();
        // 'lost' would have been queued before 'released' in the listener's channel: it has been told by now.
        assertThat(lost.get("rel")).as("listeners told lost for a lease the application released (release began before "
                + "the deadline, the refresh's 200 came after it)").isNull();
        assertThat(lease.lostReason()).as("lost reason of a lease released by the application").isEmpty();
        assertThat(toldOnLost).as("onLost listeners told of a lease the application released").isEmpty();
    }

    /**
     * The contrast that makes the finding above an inconsistency, not a rule: the same interleaving, but GCS answers the
     * held PATCH with an error (400, not retried) after the deadline passed. The refresh fails, is counted (1 of 3), and
     * the release deletes the object: no loss is reported. So on b1d5376 a release racing a slow refresh reports the
     * lease lost when GCS confirmed the refresh, and not when it refused it. Passes on b1d5376.
     */
    @Test
    void aReleaseWaitingForARefreshThatFailsPastTheDeadlineIsNotReportedLost() throws Exception {
        GcsLockRegistry r = shiftedRegistry();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.PATCH, "gcslock/fail", () -> {
            arrived.countDown();
            try {
                go.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            gcs.faults().failNext(1, 400, Operation.PATCH); // this very request is answered 400, not processed
        });
        Lease lease = r.tryAcquire("fail").orElseThrow();
        CompletableFuture<Void> releasing;
        try {
            await("the lease's first refresh to be held in GCS").atMost(Duration.ofSeconds(30)).until(() -> arrived.getCount() == 0);
            releasing = CompletableFuture.runAsync(lease::release);
            await("release() to begin").atMost(Duration.ofSeconds(30)).until(() -> gcsLease(lease).isReleasing());
            shift.addAndGet(LONG_TTL.toNanos());
        } finally {
            go.countDown();
        }
        releasing.get(30, TimeUnit.SECONDS);
        assertThat(releasedLatch("fail").await(30, TimeUnit.SECONDS)).as("released told").isTrue();
        assertThat(object("fail")).as("the release deleted our object").isNull();
        assertThat(lost.get("fail")).as("listeners told lost").isNull();
        assertThat(lease.lostReason()).isEmpty();
    }

    /** As above, for close() releasing the lease while its refresh is in flight (shutdown with a slow GCS). */
    @Test
    void closeWaitingForARefreshAnsweredPastTheDeadlineReportsNoLoss() throws Exception {
        GcsLockRegistry r = shiftedRegistry();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        holdNextPatch("shut", arrived, go);
        Lease lease = r.tryAcquire("shut").orElseThrow();
        CompletableFuture<Void> closing;
        try {
            await("the lease's first refresh to be held in GCS").atMost(Duration.ofSeconds(30)).until(() -> arrived.getCount() == 0);
            closing = CompletableFuture.runAsync(r::close);
            await("close() to begin the lease's release (it then waits for the refresh in flight)")
                    .atMost(Duration.ofSeconds(30)).until(() -> gcsLease(lease).isReleasing());
            shift.addAndGet(LONG_TTL.toNanos());
        } finally {
            go.countDown();
        }
        closing.get(30, TimeUnit.SECONDS);
        assertThat(object("shut")).as("close() deleted our object").isNull();
        assertThat(releasedLatch("shut").await(30, TimeUnit.SECONDS)).as("released told").isTrue();
        assertThat(lost.get("shut")).as("listeners told lost for a lease close() released (release began before the "
                + "deadline, the refresh's 200 came after it)").isNull();
        assertThat(lease.lostReason()).as("lost reason of a lease close() released").isEmpty();
    }

    /**
     * The new strictness on the renewal path, held to its documented promises: a {@code renew()} whose PATCH is answered
     * 200 after the deadline passed (the process paused while it was in flight; the deadline timer has not fired) throws
     * {@link LockLostException} (not {@link GcsLockException}, "still held"), reports no refresh, the lease is unhealthy,
     * every listener is told lost once, and the lease's TTL is not the renewal's.
     */
    @Test
    void aRenewalAnsweredPastTheDeadlineThrowsLockLostAndReportsNoRefresh() throws Exception {
        GcsLockRegistry r = shiftedRegistry();
        Lease lease = r.tryAcquire("renew").orElseThrow();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        // the renewal's own PATCH (the scheduled refresh comes 1-2 s after the create; renew at once, it is first)
        holdNextPatch("renew", arrived, go);
        int before = refreshes("renew");
        CompletableFuture<Void> renewing = CompletableFuture.runAsync(() -> r.renew(lease, Duration.ofSeconds(30)));
        try {
            await("the renewal's PATCH to be held in GCS").atMost(Duration.ofSeconds(30)).until(() -> arrived.getCount() == 0);
            shift.addAndGet(LONG_TTL.toNanos());
        } finally {
            go.countDown();
        }
        assertThatThrownBy(() -> renewing.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class);
        assertThat(lease.isHealthy()).isFalse();
        await("listeners told lost").atMost(Duration.ofSeconds(30)).until(() -> lost.containsKey("renew"));
        assertThat(lost.get("renew")).hasSize(1);
        assertThat(refreshes("renew")).as("no refresh reported for a renewal answered past the deadline").isEqualTo(before);
        assertThat(gcsLease(lease).timing().ttl()).as("the renewal's TTL is not in force").isEqualTo(LONG_TTL);
        lease.release();
        assertThat(object("renew")).as("the release of the lost lease still deletes our object").isNull();
    }

    /**
     * A renewal to a shorter TTL whose capped deadline (its send plus the shorter span, rule 11 per lease) passes while
     * its PATCH is in flight, though the old deadline has not: answered 200 after the cap, it must not be confirmed
     * (others may judge the object by the shorter TTL from its commit on). renew() throws {@link LockLostException}, no
     * refresh is reported, the lease is lost once. Passes on b1d5376.
     */
    @Test
    void aShorterRenewalAnsweredPastItsCappedDeadlineIsNotConfirmed() throws Exception {
        GcsLockRegistry r = shiftedRegistry();
        Lease lease = r.tryAcquire("short").orElseThrow();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        holdNextPatch("short", arrived, go);
        int before = refreshes("short");
        CompletableFuture<Void> renewing = CompletableFuture.runAsync(() -> r.renew(lease, Duration.ofSeconds(5)));
        try {
            await("the renewal's PATCH to be held in GCS").atMost(Duration.ofSeconds(30)).until(() -> arrived.getCount() == 0);
            shift.addAndGet(Duration.ofSeconds(6).toNanos()); // past the 5 s TTL's deadline, well before the 20 s TTL's
        } finally {
            go.countDown();
        }
        assertThatThrownBy(() -> renewing.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class);
        assertThat(lease.isHealthy()).isFalse();
        await("listeners told lost").atMost(Duration.ofSeconds(30)).until(() -> lost.containsKey("short"));
        assertThat(lost.get("short")).hasSize(1);
        assertThat(refreshes("short")).isEqualTo(before);
    }

    /**
     * A refresh whose 412 leads to adopting a refresh of ours right at the deadline: the PATCH commits but its reply is
     * dropped; the 412 that follows (the client's retry, or the next refresh) makes the keeper read the object, and the
     * process is paused past the deadline just before that read is answered. The adoption must be refused (rule 11 as
     * changed: LOST is final, a late adoption does not revive the lease): no refresh reported, the lease lost once with
     * the deadline's reason, and its release still deletes our object (its DELETE meets 412: the metageneration moved
     * unseen). Passes on b1d5376.
     */
    @Test
    void anAdoptionAfter412AnsweredPastTheDeadlineLosesTheLeaseAndItsReleaseStillDeletesTheObject() throws Exception {
        GcsLockRegistry r = shiftedRegistry();
        Lease lease = r.tryAcquire("adopt").orElseThrow();
        int before = refreshes("adopt");
        CountDownLatch read = new CountDownLatch(1);
        gcs.faults().dropNextReply(Operation.PATCH);
        gcs.faults().beforeNext(Operation.GET, "gcslock/adopt", () -> {
            shift.addAndGet(LONG_TTL.toNanos()); // paused past the deadline while the 412's read is in flight
            read.countDown();
        });
        assertThat(read.await(60, TimeUnit.SECONDS)).as("a refresh met 412 and read the object").isTrue();
        await("the lease to be declared lost").atMost(Duration.ofSeconds(30)).until(() -> lost.containsKey("adopt"));
        assertThat(lost.get("adopt")).hasSize(1);
        assertThat(lost.get("adopt").get(0)).contains("no refresh was confirmed");
        assertThat(refreshes("adopt")).as("no refresh reported for an adoption past the deadline").isEqualTo(before);
        assertThat(lease.isHealthy()).isFalse();
        lease.release();
        assertThat(object("adopt")).as("the release of the lost lease deletes our object").isNull();
    }

    /**
     * Listeners calling back into the lease: confirmRefresh dispatches {@code refreshed} while holding the lease's
     * monitor. A {@code refreshed} listener that renews the lease (a refresh on its listener thread, which takes the
     * lease's I/O lock and monitor) and checks its health, and a {@code lost} listener that releases it, must neither
     * deadlock nor hold back the refresher: the lease keeps being refreshed and is released cleanly.
     */
    @Test
    void listenersRenewingAndCheckingFromRefreshedDoNotBlockTheRefresher() throws Exception {
        AtomicInteger renewals = new AtomicInteger();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        GcsLockRegistry[] self = new GcsLockRegistry[1];
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void refreshed(Lease lease) {
                try {
                    if (lease.isHealthy() && renewals.incrementAndGet() <= 5) {
                        self[0].renew(lease, null);
                    }
                } catch (RuntimeException e) {
                    failures.add(e);
                }
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                lease.release();
            }
        }));
        self[0] = r;
        Lease lease = r.tryAcquire("reentrant").orElseThrow();
        await("five renewals from the refreshed listener").atMost(Duration.ofSeconds(30)).until(() -> renewals.get() >= 6);
        assertThat(lease.isHealthy()).isTrue();
        assertThat(failures).isEmpty();
        CompletableFuture<Void> releasing = CompletableFuture.runAsync(lease::release);
        releasing.get(30, TimeUnit.SECONDS);
        assertThat(object("reentrant")).isNull();
    }
}
