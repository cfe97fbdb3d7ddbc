package io.github.gcslock;

import com.google.cloud.storage.BlobId;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link LockEventListener} promises one-at-a-time, in-order delivery per lock and listener (rule 20) — across the
 * leases of one name too: the next lease's "acquired" comes after every event of the lease before it; and a listener
 * that blocks delays only its own later events.
 */
class EventOrderAcrossLeasesTest extends EmulatorTestBase {

    /**
     * Item 5. Interleaving: lease 1 is lost (its object deleted by an administrator) and its {@code lost}
     * listener is slow; the application releases lease 1, and another thread acquires the name again (lease 2)
     * while that listener still runs. Before: {@code acquired 2} ran at once on the acquiring thread, during
     * {@code lost 1} and before {@code released 1}. Now the acquiring thread waits for lease 1's events.
     */
    @Test
    void theNextLeasesAcquiredComesAfterEveryEventOfTheLeaseBefore() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        CountDownLatch lostStarted = new CountDownLatch(1);
        CountDownLatch letLostFinish = new CountDownLatch(1);
        AtomicReference<Lease> first = new AtomicReference<>();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            private String which(Lease lease) {
                return lease == first.get() ? "1" : "2";
            }

            @Override
            public void acquired(Lease lease) {
                events.add("acquired " + (first.get() == null ? "1" : which(lease)));
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                events.add("lost " + which(lease));
                lostStarted.countDown();
                try {
                    letLostFinish.await(10, TimeUnit.SECONDS); // an alert sent over a slow network
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                events.add("lost-done " + which(lease));
            }

            @Override
            public void released(Lease lease) {
                events.add("released " + which(lease));
            }
        }));
        first.set(r.tryAcquire("ordered").orElseThrow());
        storage.delete(BlobId.of(BUCKET, "gcslock/ordered")); // the next refresh meets 404: lease 1 is lost
        assertThat(lostStarted.await(10, TimeUnit.SECONDS)).isTrue();
        first.get().release();

        AtomicReference<Lease> second = new AtomicReference<>();
        Thread acquirer = new Thread(() -> second.set(r.tryAcquire("ordered").orElseThrow()), "second-acquirer");
        acquirer.start();
        // Either "acquired 2" ran (the old order), or the acquiring thread waits for lease 1's events, or it returned
        // with "acquired 2" queued behind them.
        await("the second acquisition to run \"acquired 2\", wait for lease 1's events, or return")
                .atMost(Duration.ofSeconds(30)).until(() -> events.contains("acquired 2") || waitsInTheDispatcher(acquirer)
                || !acquirer.isAlive());
        letLostFinish.countDown();
        acquirer.join(10_000);
        second.get().release();
        await("lease 2's \"released\" event").atMost(Duration.ofSeconds(30)).until(() -> events.contains("released 2"));
        assertThat(events).containsExactly("acquired 1", "lost 1", "lost-done 1", "released 1", "acquired 2", "released 2");
    }

    /**
     * Rule 20: a listener still busy with one lease delays only its own later events. Interleaving: listener X blocks
     * in lease 1's {@code lost} (an alert over a slow network); the application releases lease 1 and acquires the name
     * again (lease 2), whose object is then deleted too, so lease 2 is lost while X still runs. Before: every event
     * of the lock waited in one queue behind X, so lease 2's {@code onLost} listener and every other registry
     * listener heard of the loss only after X returned — the holder of lease 2 could go on working unwarned for as
     * long as X blocked. Now each listener (and each lease's {@code onLost} listeners) has a queue per lock of its own.
     */
    @Test
    void aListenerBusyWithOneLeaseDelaysNoOtherListenerOfTheNextLeasesLoss() throws Exception {
        List<String> slow = new CopyOnWriteArrayList<>();
        List<String> other = new CopyOnWriteArrayList<>();
        CountDownLatch lostStarted = new CountDownLatch(1);
        CountDownLatch letLostFinish = new CountDownLatch(1);
        AtomicReference<Lease> first = new AtomicReference<>();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                slow.add("acquired " + (lease == first.get() || first.get() == null ? "1" : "2"));
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                boolean one = lease == first.get();
                slow.add("lost " + (one ? "1" : "2"));
                if (one) {
                    lostStarted.countDown();
                    try {
                        letLostFinish.await(60, TimeUnit.SECONDS); // an alert sent over a slow network
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }

            @Override
            public void released(Lease lease) {
                slow.add("released " + (lease == first.get() ? "1" : "2"));
            }
        }).listener(new LockEventListener() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                other.add("lost " + (lease == first.get() ? "1" : "2"));
            }
        }));
        try {
            first.set(r.tryAcquire("busy").orElseThrow());
            storage.delete(BlobId.of(BUCKET, "gcslock/busy")); // the next refresh meets 404: lease 1 is lost
            assertThat(lostStarted.await(30, TimeUnit.SECONDS)).as("the slow listener's lost of lease 1 started").isTrue();
            first.get().release();
            Lease second = r.tryAcquire("busy").orElseThrow();
            List<String> onLost = new CopyOnWriteArrayList<>();
            second.onLost((lease, reason) -> onLost.add("lost 2"));
            storage.delete(BlobId.of(BUCKET, "gcslock/busy")); // and lease 2 is lost while the slow listener still runs

            await("lease 2's onLost listener and the other registry listener told of its loss while the first listener"
                    + " still blocks in lease 1's lost").atMost(Duration.ofSeconds(30))
                    .until(() -> onLost.contains("lost 2") && other.contains("lost 2"));
            assertThat(slow).as("the blocked listener has had only its own events so far").containsExactly("acquired 1", "lost 1");
            assertThat(second.isHealthy()).isFalse();

            letLostFinish.countDown();
            second.release();
            await("the slow listener's queued events").atMost(Duration.ofSeconds(30)).until(() -> slow.contains("released 2"));
            assertThat(slow).as("each listener still sees the lock's events in order")
                    .containsExactly("acquired 1", "lost 1", "released 1", "acquired 2", "lost 2", "released 2");
            assertThat(other).containsExactly("lost 1", "lost 2");
        } finally {
            letLostFinish.countDown();
        }
    }

    private static boolean waitsInTheDispatcher(Thread t) {
        Thread.State s = t.getState();
        return (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING)
                && Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().startsWith(LockEventDispatcher.class.getName()));
    }

    /**
     * A listener of a lock that acquires the same lock (a lost listener that tries to take the lock back)
     * must not wait for itself: the call returns the lease while the listener's "lost" still runs. Its "acquired" is
     * queued behind the events of the lock it has not been told yet (its "lost" still running, then the "released" of
     * the lease it gave back): one event at a time, in order per lock and listener (rule 20). It used to run at once,
     * nested inside "lost", ahead of the queued "released" (ListenerChannelReviewTest).
     */
    @Test
    void aListenerThatAcquiresItsOwnLockAgainDoesNotWaitForItself() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        AtomicReference<GcsLockRegistry> self = new AtomicReference<>();
        AtomicReference<Lease> retaken = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                events.add("acquired");
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                events.add("lost");
                lease.release();
                retaken.set(self.get().tryAcquire("retaken").orElse(null));
                events.add("lost-done");
                done.countDown();
            }
        }));
        self.set(r);
        r.tryAcquire("retaken").orElseThrow();
        storage.delete(BlobId.of(BUCKET, "gcslock/retaken"));
        assertThat(done.await(10, TimeUnit.SECONDS)).as("the lost listener finished").isTrue();
        assertThat(retaken.get()).isNotNull();
        await("the retaken lease's acquired").atMost(Duration.ofSeconds(30)).until(() -> events.size() >= 4);
        assertThat(events).startsWith("acquired", "lost", "lost-done", "acquired");
        retaken.get().release();
    }
}
