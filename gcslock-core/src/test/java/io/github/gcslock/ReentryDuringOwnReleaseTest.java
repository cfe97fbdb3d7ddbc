package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Rule 17: an owner whose hold was given back on another thread (a future's completion, a listener, a release handed
 * off) holds nothing once that release began, even while its DELETE is still in flight and the name's slot still
 * names the owner. Its next call waits for that release like anyone's and gets a lease of its own; it is not a
 * reentrant call into a lost hold ("the enclosing hold of this owner is no longer healthy: released"). Found by
 * review 4 (its attacks A12, through a listener that gives back in acquireStarted a hold it took there, and A13).
 */
class ReentryDuringOwnReleaseTest extends EmulatorTestBase {

    @Test
    void theHoldingThreadAsksAgainWhileAnotherThreadReleasesItsHold() throws Exception {
        GcsLockRegistry r = registry();
        // the same thread, while that DELETE is in flight: it holds nothing, so it waits for the release
        Lease lease = askAgainWhileItsReleaseIsInFlight(r, "given-back", () -> r.acquire("given-back", Duration.ofSeconds(10)));
        assertIsALeaseOfItsOwnAndRelease(lease);
    }

    /**
     * The same blind spot in the refusal of an invocation's wait for its own thread's hold: the thread's plain hold is
     * being given back on another thread (its DELETE in flight), so the thread holds nothing and an invocation it starts
     * waits for that release like anyone. Before, it was refused at once with "lock ... is held by this thread".
     */
    @Test
    void anInvocationOnTheThreadWhoseHoldIsBeingReleasedElsewhereWaitsForThatRelease() throws Exception {
        GcsLockRegistry r = registry();
        Lease lease = askAgainWhileItsReleaseIsInFlight(r, "handed-off",
                () -> r.acquire("handed-off", Duration.ofSeconds(10), null, LockOwner.newInvocation("job")));
        assertIsALeaseOfItsOwnAndRelease(lease);
    }

    /**
     * On a thread of its own: takes {@code name}, gives it back on another thread with that release's DELETE held, and
     * while the DELETE is held (let go 300 ms later) asks again with {@code again}, on the thread that took it.
     */
    private Lease askAgainWhileItsReleaseIsInFlight(GcsLockRegistry r, String name, Callable<Lease> again) throws Exception {
        CountDownLatch deleteHeld = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        CompletableFuture<Lease> asked = CompletableFuture.supplyAsync(() -> {
            try {
                Lease first = r.acquire(name, Duration.ZERO);
                holdNextDelete(name, deleteHeld, letGo);
                CompletableFuture.runAsync(first::release); // given back on another thread
                assertThat(deleteHeld.await(20, TimeUnit.SECONDS)).isTrue();
                CompletableFuture.runAsync(() -> {
                    try {
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    letGo.countDown();
                });
                return again.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            return asked.get(60, TimeUnit.SECONDS);
        } finally {
            letGo.countDown();
        }
    }

    /** Holds the next DELETE of {@code name}'s object until {@code letGo}; {@code held} counts down when it arrives. */
    private void holdNextDelete(String name, CountDownLatch held, CountDownLatch letGo) {
        gcs.faults().beforeNext(Operation.DELETE, "gcslock/" + name, () -> {
            held.countDown();
            try {
                letGo.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** A healthy lease of its own (no reentrant hold of the one being released); its release leaves no object. */
    private void assertIsALeaseOfItsOwnAndRelease(Lease lease) {
        assertThat(lease.isHealthy()).isTrue();
        assertThat(lease).isNotInstanceOf(ReentrantHold.class);
        lease.release();
        assertThat(object(lease.name())).isNull();
    }

    /**
     * Rule 13 with rule 17: a thread whose hold was given back with {@code releaseAfter} holds nothing while the delay
     * runs (the delayed release ends by itself), so an invocation it starts waits for that release instead of being
     * refused as a wait for its own thread's hold.
     */
    @Test
    void anInvocationOnTheThreadWhoseHoldWasGivenBackWithReleaseAfterWaitsOutTheDelay() throws Exception {
        GcsLockRegistry r = registry();
        CompletableFuture<Lease> invocation = CompletableFuture.supplyAsync(() -> {
            try {
                Lease first = r.acquire("held-at-least", Duration.ZERO);
                r.releaseAfter(first, Duration.ofMillis(500));
                return r.acquire("held-at-least", Duration.ofSeconds(20), null, LockOwner.newInvocation("job"));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Lease lease = invocation.get(60, TimeUnit.SECONDS);
        assertIsALeaseOfItsOwnAndRelease(lease);
    }

    /** The refusal stays where it is due: the thread really holds the name, so an invocation's wait is refused at once. */
    @Test
    void anInvocationOnTheThreadThatHoldsTheNameIsStillRefusedAtOnce() throws Exception {
        GcsLockRegistry r = registry();
        Lease first = r.acquire("still-held", Duration.ZERO);
        try {
            assertThatThrownBy(() -> r.acquire("still-held", Duration.ofSeconds(10), null, LockOwner.newInvocation("job")))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("held by this thread");
        } finally {
            first.release();
        }
    }

    /**
     * A release that begins while the owner's hold count is still 1: a hand-out whose {@code acquireFinished} listener
     * threw an Error is released whatever its holds, on the acquiring thread. An invocation owner may call from several
     * threads: its call on another thread while that DELETE is in flight holds nothing and waits for the release.
     * Read as an enclosing hold, it failed with "the enclosing hold of this owner is no longer healthy: released".
     */
    @Test
    void theSameInvocationOnAnotherThreadWaitsForTheReleaseOfAFailedHandOut() throws Exception {
        AtomicBoolean breakOnce = new AtomicBoolean(true);
        CountDownLatch deleteHeld = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        CountDownLatch waitStarted = new CountDownLatch(1);
        GcsLockRegistry r = registry(x -> x.listener(new LockEventListener() {
            @Override
            public void acquireStarted(String name, AcquireMode mode) {
                if (mode == AcquireMode.WAIT) {
                    waitStarted.countDown();
                }
            }

            @Override
            public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
                if (outcome == AcquireOutcome.ACQUIRED && breakOnce.getAndSet(false)) {
                    // armed only now: a late create's clean-up DELETE before the hand-out must not take the hook
                    holdNextDelete("failed-hand-out", deleteHeld, letGo);
                    throw new AssertionError("acquireFinished broken");
                }
            }
        }));
        LockOwner job = LockOwner.newInvocation("job");
        CompletableFuture<Object> failed = CompletableFuture.supplyAsync(() -> {
            try {
                return r.tryAcquire("failed-hand-out", null, job);
            } catch (Throwable e) {
                return e;
            }
        });
        Lease lease;
        try {
            assertThat(deleteHeld.await(20, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Lease> again = CompletableFuture.supplyAsync(() -> {
                try {
                    return r.acquire("failed-hand-out", Duration.ofSeconds(10), null, job);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            // the second call has begun its wait (or failed at once, as it did before the fix) with the DELETE held
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (waitStarted.getCount() > 0 && !again.isDone() && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            Thread.sleep(100);
            letGo.countDown();
            lease = again.get(60, TimeUnit.SECONDS);
        } finally {
            letGo.countDown();
        }
        assertThat(failed.get(30, TimeUnit.SECONDS)).isInstanceOf(AssertionError.class);
        assertIsALeaseOfItsOwnAndRelease(lease);
    }

    /**
     * A hold that was lost first (an administrator's delete found by the next refresh) and then given back on another
     * thread (an onLost listener, a future's completion) is no enclosing hold either: while that release's DELETE is in
     * flight the owner's wait waits for it and gets a lease of its own, and its one-shot finds the name taken (empty).
     * Before, both failed with LockLostException "the enclosing hold of this owner is no longer healthy: lock object
     * was deleted". Found by review 5 (R5-1, R5-2).
     */
    @Test
    void aLostHoldGivenBackOnAnotherThreadIsNoEnclosingHoldForTheOwnersNextCalls() throws Exception {
        GcsLockRegistry r = registry();
        CountDownLatch deleteHeld = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        CompletableFuture<Object[]> again = CompletableFuture.supplyAsync(() -> {
            try {
                Lease first = r.acquire("lost-given-back", Duration.ZERO);
                assertThat(storage.delete(object("lost-given-back").getBlobId())).isTrue(); // an administrator's delete
                await("the lease declared lost by its next refresh").atMost(Duration.ofSeconds(30))
                        .until(() -> first.lostReason().isPresent());
                holdNextDelete("lost-given-back", deleteHeld, letGo);
                CompletableFuture.runAsync(first::release); // the owner gives its lost hold back, on another thread
                assertThat(deleteHeld.await(20, TimeUnit.SECONDS)).isTrue();
                Optional<Lease> oneShot = r.tryAcquire("lost-given-back");
                letGo.countDown();
                return new Object[] {oneShot, r.acquire("lost-given-back", Duration.ofSeconds(10))};
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Object[] outcomes;
        try {
            outcomes = again.get(90, TimeUnit.SECONDS);
        } finally {
            letGo.countDown();
        }
        assertThat((Optional<?>) outcomes[0]).as("a one-shot while the lost hold's release is in flight").isEmpty();
        Lease lease = (Lease) outcomes[1];
        assertIsALeaseOfItsOwnAndRelease(lease);
    }
}
