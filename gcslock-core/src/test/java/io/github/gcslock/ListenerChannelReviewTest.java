package io.github.gcslock;

import com.google.cloud.storage.BlobId;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An independent review of rule 20's one channel per lock and listener, through the public API, and the defects of
 * issue 29 it and the interleaving explorer found: a listener blocking on an application thread (in "acquired", in
 * "released", in a renewal's request event) held back other listeners' events of the lock, their "lost" too, or the
 * lease's refreshes; a listener's nested acquisition was told ahead of its queued "released". Each test failed on the
 * engine before the fix (the failure in its Javadoc).
 */
class ListenerChannelReviewTest extends EmulatorTestBase {

    /** Names leases 1, 2, ... in the order a listener first sees them. */
    static final class Names {
        final Map<Lease, Integer> ids = new ConcurrentHashMap<>();
        final AtomicInteger next = new AtomicInteger();

        String of(Lease l) {
            return Integer.toString(ids.computeIfAbsent(l, x -> next.incrementAndGet()));
        }
    }

    private static void block(CountDownLatch l) {
        try {
            l.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A listener that releases its lease and acquires the name again inside its own "acquired" (on the acquiring
     * thread). Its channel holds "released 1" queued behind the running "acquired 1"; the nested acquisition runs
     * "acquired 2" at once (running == this thread), ahead of the queued "released 1". Before the fix:
     * {@code Expecting actual: ["acquired 1", "acquired 2", "released 1", "released 2"] to contain exactly (and in same
     * order) ... "released 1", "acquired 2"}. Now a nested event is queued behind the listener's own events.
     */
    @Test
    void aListenerThatReleasesAndReacquiresInsideAcquiredSeesTheLeasesInOrder() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        Names names = new Names();
        AtomicBoolean once = new AtomicBoolean();
        AtomicReference<Lease> second = new AtomicReference<>();
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        reg.set(registry(b -> b.listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                events.add("acquired " + names.of(lease));
                if (once.compareAndSet(false, true)) {
                    lease.release();
                    second.set(reg.get().tryAcquire("nest").orElseThrow());
                }
            }

            @Override
            public void released(Lease lease) {
                events.add("released " + names.of(lease));
            }
        })));
        reg.get().tryAcquire("nest").orElseThrow();
        assertThat(second.get()).isNotNull();
        second.get().release();
        await().atMost(Duration.ofSeconds(30)).until(() -> events.size() >= 4);
        assertThat(events).as("one listener's events of one lock, in the order raised, across leases")
                .containsExactly("acquired 1", "released 1", "acquired 2", "released 2");
    }

    /**
     * Two listeners; A blocks in "acquired" on the acquiring thread (an alert over a slow network). Lease is lost
     * meanwhile. B's channel was claimed up front (empty queue, nobody drains it), so B's "acquired" and "lost" wait
     * for A: a listener that blocks delays another listener's events. Before the fix: {@code ConditionTimeout ...
     * 'listener B told of the loss while listener A still blocks in acquired' didn't complete within 30 seconds}.
     * Now B's "acquired" is a reservation that a pool thread takes over when B's "lost" arrives behind it.
     */
    @Test
    void aListenerBlockedInAcquiredDelaysNoOtherListenersLoss() throws Exception {
        List<String> b = new CopyOnWriteArrayList<>();
        CountDownLatch aStarted = new CountDownLatch(1);
        CountDownLatch letA = new CountDownLatch(1);
        GcsLockRegistry r = registry(x -> x.listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                aStarted.countDown();
                block(letA);
            }
        }).listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                b.add("acquired");
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                b.add("lost");
            }
        }));
        try {
            CompletableFuture<Lease> call = CompletableFuture.supplyAsync(() -> r.tryAcquire("slowacq").orElseThrow());
            assertThat(aStarted.await(30, TimeUnit.SECONDS)).isTrue();
            storage.delete(BlobId.of(BUCKET, "gcslock/slowacq")); // the next refresh meets 404: the lease is lost
            await("listener B told of the loss while listener A still blocks in acquired").atMost(Duration.ofSeconds(30))
                    .until(() -> b.contains("lost"));
            assertThat(b).containsExactly("acquired", "lost");
            letA.countDown();
            call.get(30, TimeUnit.SECONDS).release();
        } finally {
            letA.countDown();
        }
    }

    /**
     * Two listeners; A blocks in lease 1's "released" on the releasing application thread. The releasing thread runs
     * the deliveries one after another, so B's "released 1" waits for A; and B's channel holds [released 1] with no
     * drainer, so B's "acquired 2" and "lost 2" of the next lease (another thread) are stuck behind it too. Before the
     * fix: {@code ConditionTimeout ... 'listener B told of lease 2's loss while listener A still blocks in lease 1's
     * released' didn't complete within 30 seconds}.
     */
    @Test
    void aListenerBlockedInReleasedOnTheReleasingThreadDelaysNoOtherListenersNextLease() throws Exception {
        List<String> b = new CopyOnWriteArrayList<>();
        Names names = new Names();
        CountDownLatch aStarted = new CountDownLatch(1);
        CountDownLatch letA = new CountDownLatch(1);
        AtomicBoolean once = new AtomicBoolean();
        GcsLockRegistry r = registry(x -> x.listener(new LockEventListener() {
            @Override
            public void released(Lease lease) {
                if (once.compareAndSet(false, true)) {
                    aStarted.countDown();
                    block(letA);
                }
            }
        }).listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                b.add("acquired " + names.of(lease));
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                b.add("lost " + names.of(lease));
            }

            @Override
            public void released(Lease lease) {
                b.add("released " + names.of(lease));
            }
        }));
        try {
            Lease first = r.tryAcquire("slowrel").orElseThrow();
            CompletableFuture<Void> releasing = CompletableFuture.runAsync(first::release);
            assertThat(aStarted.await(30, TimeUnit.SECONDS)).isTrue();
            Lease second = r.tryAcquire("slowrel").orElseThrow();
            List<String> onLost = new CopyOnWriteArrayList<>();
            second.onLost((l, e) -> onLost.add("lost"));
            storage.delete(BlobId.of(BUCKET, "gcslock/slowrel"));
            await("lease 2's onLost").atMost(Duration.ofSeconds(30)).until(() -> onLost.contains("lost"));
            await("listener B told of lease 2's loss while listener A still blocks in lease 1's released")
                    .atMost(Duration.ofSeconds(30)).until(() -> b.contains("lost 2"));
            assertThat(b).containsExactly("acquired 1", "released 1", "acquired 2", "lost 2");
            letA.countDown();
            releasing.get(30, TimeUnit.SECONDS);
            second.release();
        } finally {
            letA.countDown();
        }
    }

    /**
     * Found by {@code EngineInterleavingExplorerTest} (seed 225307408890133516 of the hostile programs: "p2 lost p2's lease
     * ... with no fault: ... no refresh was confirmed within PT8S"): a renewal's request events ran on the renewing
     * thread while it held the lease's I/O lock, so a listener blocking in one held back every refresh of the lease
     * until it was lost. Now the events an application thread raises while it holds the lock are delivered once it
     * let the lock go: the blocked listener holds up the renew call only. Before the fix: {@code ConditionTimeout ...
     * 'the lease refreshed while the listener blocks in its renewal's request event' didn't complete within 30 seconds}.
     */
    @Test
    void aListenerBlockingInARenewalsRequestEventHoldsBackNoRefreshOfTheLease() throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        GcsLockRegistry r = registry(x -> x.listener(new LockEventListener() {
            @Override
            public void requestAnswered(String name) {
                if ("renewing".equals(name) && armed.compareAndSet(true, false)) {
                    blocked.countDown();
                    block(letGo); // an alert over a slow network
                }
            }
        }));
        try {
            Lease lease = r.tryAcquire("renewing").orElseThrow();
            armed.set(true);
            CompletableFuture<Void> renewal = CompletableFuture.runAsync(() -> r.renew(lease, TTL));
            assertThat(blocked.await(30, TimeUnit.SECONDS)).as("the listener blocks in the renewal's request event").isTrue();
            java.time.Instant before = lease.lastRefreshAt();
            await("the lease refreshed while the listener blocks in its renewal's request event")
                    .atMost(Duration.ofSeconds(30)).until(() -> lease.lastRefreshAt().isAfter(before));
            await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(30)).until(lease::isHealthy);
            letGo.countDown();
            renewal.get(30, TimeUnit.SECONDS);
            assertThat(lease.isHealthy()).isTrue();
            lease.release();
        } finally {
            letGo.countDown();
        }
    }

    /** A listener that closes its registry inside "acquired": no deadlock, nothing left in the bucket. */
    @Test
    void aListenerThatClosesTheRegistryInsideAcquiredDoesNotDeadlock() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        reg.set(registry(x -> x.listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                events.add("acquired");
                reg.get().close();
            }

            @Override
            public void released(Lease lease) {
                events.add("released");
            }
        })));
        CompletableFuture<Object> call = CompletableFuture.supplyAsync(() -> {
            try {
                return reg.get().tryAcquire("closing");
            } catch (RuntimeException e) {
                return e;
            }
        });
        call.get(30, TimeUnit.SECONDS);
        assertThat(object("closing")).isNull();
        await().atMost(Duration.ofSeconds(30)).until(() -> events.contains("released"));
        assertThat(events).containsExactly("acquired", "released");
    }
}
