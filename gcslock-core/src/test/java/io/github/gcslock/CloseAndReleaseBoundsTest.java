package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * Rule 14's bounds of close() and of a release() racing it, and what they wait for (review 5's R5-5..R5-8, issue 29):
 * close() wakes a waiter queued on the local permit whatever the permit's holder blocks in; a release racing close()'s
 * release of its lease waits as long as that release's real worst case; close() waits for the delete of a create that
 * raced it; and no release waits for a listener (rule 20). Each test failed on the engine before its fix (messages in
 * the commit that added it); its Javadoc names the promise it holds the engine to.
 */
class CloseAndReleaseBoundsTest extends EmulatorTestBase {

    private static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(20, TimeUnit.SECONDS)) {
                throw new AssertionError("latch not counted down within 20 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Runs {@code body} on a fresh thread of its own (a thread owner that is not the test's). */
    private static <T> CompletableFuture<T> onThread(String name, java.util.concurrent.Callable<T> body) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(body.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return f;
    }

    /** Holds the next DELETE of {@code name}'s object until {@code letGo}; {@code held} counts down when it arrives. */
    private void holdNextDelete(String name, CountDownLatch held, CountDownLatch letGo) {
        gcs.faults().beforeNext(Operation.DELETE, "gcslock/" + name, () -> {
            held.countDown();
            try {
                letGo.await(20, TimeUnit.SECONDS); // within the registry's operation timeout, or the client retries
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    // ------------------------------------------------------------------ R5-5: rule 14, close() and the local permit

    /**
     * R5-5. Rule 14: "Closing a registry wakes every waiting acquire (it fails with a clear exception)"; rule 20's table:
     * a listener blocking in an acquisition event on the acquiring thread delays "that call, and that listener's later
     * events of the lock". notAcquired runs while the calling thread still holds the name's local permit
     * (Acquirer.waitLoop/tryOnce call it inside the permit's try), so a listener blocking there also blocks every other
     * local waiter of the name in {@code runtime.tryAcquire(slot.permit, left)} — a wait close() does not wake (it only
     * counts down {@code closing}). A Lock.lock()-style waiter then outlives close() for as long as another thread's
     * listener blocks.
     */
    @Test
    void closeWakesAWaiterQueuedOnTheLocalPermitBehindAListenerBlockingInNotAcquired() throws Exception {
        GcsLockRegistry other = holder(); // another process holds the name for the whole test
        Lease held = other.tryAcquire("busy").orElseThrow();
        CountDownLatch blockedInNotAcquired = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        AtomicReference<Thread> firstWaiter = new AtomicReference<>();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void notAcquired(String name, LockInfo holder) {
                if (Thread.currentThread() == firstWaiter.get()) {
                    blockedInNotAcquired.countDown();
                    try {
                        unblock.await(60, TimeUnit.SECONDS); // an alert over a slow network
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }));
        try {
            CompletableFuture<Lease> w1 = onThread("waiter-1", () -> {
                firstWaiter.set(Thread.currentThread());
                return r.acquire("busy", Duration.ofSeconds(60));
            });
            awaitLatch(blockedInNotAcquired);
            CompletableFuture<Lease> w2 = onThread("waiter-2", () -> r.acquire("busy", Duration.ofSeconds(60)));
            sleep(500); // waiter-2's next look is due (the backoff's cap is 50 ms): it queues on the local permit
            assertThat(w2).isNotDone();
            r.close();
            Throwable outcome;
            try {
                w2.get(10, TimeUnit.SECONDS);
                outcome = null;
            } catch (java.util.concurrent.ExecutionException e) {
                outcome = e.getCause();
            } catch (TimeoutException e) {
                fail("waiter-2 was not woken by close(): still waiting 10 s after close() returned (queued on the local "
                        + "permit that waiter-1 keeps while its notAcquired listener blocks)");
                return;
            }
            assertThat(outcome).as("waiter-2 after close()").isInstanceOf(IllegalStateException.class);
            assertThat(outcome.getMessage()).contains("closed");
        } finally {
            unblock.countDown();
            held.release();
        }
    }

    // ------------------------------------------------------------------ R5-6: rule 14, the release bound

    /**
     * R5-6. Lease#release(): "If the registry's close() is releasing this lease on another thread at the same time, this
     * returns when that release has ended (then bounded by four operation timeouts and two write windows), so the object is
     * gone when it returns unless GCS refused or did not answer the delete". The bound (GcsLockRegistry: "a refresh in
     * flight ..., then makes at most three bounded calls and one write-window wait") is too short for a release that
     * waits for a renewal in flight and then meets 429 (the single-try DELETE; a window; the retrying DELETE) and 412 (a
     * read; the guarded re-delete) — rule 12's own path: five bounded calls and three windows. Every call here is
     * answered within the operation timeout (2 s; each held 1.8 s), yet release() returns with the object still there.
     */
    @Test
    void aReleaseRacingClosesReleaseReturnsOnlyOnceTheObjectIsGoneWhenEveryCallIsAnswered() throws Exception {
        long hold = 1800;
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(10)).refreshInterval(Duration.ofSeconds(2))
                .operationTimeout(Duration.ofSeconds(2)));
        String name = "slow-release";
        String object = "gcslock/" + name;
        Lease lease = r.acquire(name, Duration.ZERO);
        CountDownLatch patchHeld = new CountDownLatch(1);
        Runnable slow = () -> sleep(hold);
        gcs.faults().beforeNext(Operation.PATCH, object, () -> {
            patchHeld.countDown();
            slow.run();
        });
        gcs.faults().beforeNext(Operation.DELETE, object, slow); // the single-try DELETE: slow, then 429
        gcs.faults().failNext(1, 429, Operation.DELETE);
        gcs.faults().beforeNext(Operation.DELETE, object, () -> { // the retrying DELETE: slow, then 412
            slow.run();
            foreignRefresh(name); // the metageneration moves (as a late refresh of ours would); its own GET comes first
            gcs.faults().beforeNext(Operation.GET, object, slow); // then the 412 path's read
        });
        gcs.faults().beforeNext(Operation.DELETE, object, slow); // the guarded re-delete
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            pool.submit(() -> r.renew(lease, null)); // holds the lease's I/O lock for its PATCH
            awaitLatch(patchHeld);
            var closing = pool.submit(r::close); // close() begins the release and waits for the I/O lock
            await("close() began the release").atMost(Duration.ofSeconds(10)).until(() -> r.heldLeases().isEmpty());
            long t0 = System.nanoTime();
            lease.release(); // races close()'s release: returns when that release has ended (bounded)
            long took = (System.nanoTime() - t0) / 1_000_000;
            Blob left = object(name);
            closing.get(60, TimeUnit.SECONDS);
            assertThat(object(name)).as("every call was answered: the release that close() began deleted the object "
                    + "in the end").isNull();
            assertThat(left).as("the object when release() returned after " + took + " ms (every call was answered)")
                    .isNull();
        } finally {
            pool.shutdown();
            pool.awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ R5-7: rule 14, close() and a create that raced it

    /**
     * R5-7. GcsLockRegistry#close(): "Returns when every release in flight has ended"; DESIGN.md rule 14: "close()
     * returns only when every release in flight has finished, wherever it runs". A one-shot whose create was in flight
     * when close() began finds the registry closed at hand-out and deletes its object (LeaseIssuer.own ->
     * LeaseRelease.deleteUnhandedOut, counted in flight). close() was still waiting for another release (an application
     * thread's, its DELETE slow) but LeaseRelease.awaitReleases took its list of releases in flight once, before that
     * delete began: close() returns while it is in flight, and the object is in the bucket after close() returned (a
     * shutdown hook's close(), then the JVM exits: left until its TTL).
     */
    @Test
    void closeReturnsOnlyOnceTheDeleteOfACreateThatRacedItHasEnded() throws Exception {
        // calls held for seconds stay within the operation timeout (no client retry of its own)
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(30)).refreshInterval(Duration.ofSeconds(3))
                .operationTimeout(Duration.ofSeconds(10)));
        Lease other = r.acquire("r5-7-other", Duration.ZERO);
        CountDownLatch otherDeleteHeld = new CountDownLatch(1);
        CountDownLatch otherGo = new CountDownLatch(1);
        holdNextDelete("r5-7-other", otherDeleteHeld, otherGo);
        CountDownLatch insertHeld = new CountDownLatch(1);
        CountDownLatch insertGo = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.INSERT, () -> { // the next create is the one-shot's (an INSERT names no object here)
            insertHeld.countDown();
            try {
                insertGo.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CountDownLatch racedDeleteHeld = new CountDownLatch(1);
        CountDownLatch racedGo = new CountDownLatch(1);
        holdNextDelete("r5-7-raced", racedDeleteHeld, racedGo);
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            pool.submit(other::release); // an application thread's release, its DELETE slow
            awaitLatch(otherDeleteHeld);
            var oneShot = pool.submit(() -> r.tryAcquire("r5-7-raced")); // its create in flight
            awaitLatch(insertHeld);
            var closing = pool.submit(r::close); // close(): nothing of its own to release; waits for the release in flight
            sleep(300); // close() is in its wait for the releases in flight
            assertThat(closing.isDone()).as("close() waits for the application's release").isFalse();
            insertGo.countDown(); // the create commits; the hand-out finds the registry closed and deletes it again
            awaitLatch(racedDeleteHeld);
            otherGo.countDown(); // the application's release ends
            boolean returned;
            try {
                closing.get(3, TimeUnit.SECONDS);
                returned = true;
            } catch (TimeoutException stillWaiting) {
                returned = false; // waiting for the raced create's delete: right
            }
            Blob atReturn = returned ? object("r5-7-raced") : null;
            racedGo.countDown();
            closing.get(30, TimeUnit.SECONDS);
            Throwable oneShotEnd = null;
            try {
                oneShot.get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                oneShotEnd = e.getCause();
            }
            assertThat(oneShotEnd).as("the one-shot whose create raced close() fails 'closed' (rule 14)")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            assertThat(atReturn).as("the raced create's object when close() returned (its delete in flight)").isNull();
        } finally {
            insertGo.countDown();
            otherGo.countDown();
            racedGo.countDown();
            pool.shutdown();
            pool.awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ R5-8: rule 20, close() waits for a listener

    /**
     * R5-8. DESIGN.md rule 20: "What a releasing thread itself may wait for: ... its own bounded calls ...; never a
     * listener. close() waits for the same things"; LeaseRelease.release: "end(lease); // before the listener: a release()
     * or close() waiting for this one does not wait for listeners". The outcome of the release's DELETE is held back while
     * the thread holds the lease's I/O lock and delivered by GcsLease.unlockIo — inside the release, before
     * holds.released and end(lease). So close() racing an application thread's release waits for that thread's
     * requestCompleted listener (here one that blocks: a health meter pushing over a slow network), for the whole
     * release bound (4 operation timeouts + 2 windows: 20 s here, 42 s with the defaults), though the DELETE was answered
     * and the object is gone. (Local waiters of the name likewise wait for it: the permit is freed after unlockIo.)
     */
    @Test
    void closeDoesNotWaitForARequestListenerOfAnApplicationThreadsRelease() throws Exception {
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2))
                .operationTimeout(Duration.ofSeconds(5)).listener(new LockEventListener() {
                    @Override
                    public void requestCompleted(RequestOutcome outcome) {
                        if (Thread.currentThread().getName().equals("releaser-r5-8")) {
                            blocked.countDown();
                            try {
                                unblock.await(60, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }
                }));
        Lease lease = r.acquire("r5-8", Duration.ZERO);
        try {
            onThread("releaser-r5-8", () -> {
                lease.release();
                return null;
            });
            awaitLatch(blocked);
            assertThat(object("r5-8")).as("the release's DELETE was answered: the object is gone").isNull();
            CompletableFuture<Object> closing = onThread("closer-r5-8", () -> {
                r.close();
                return null;
            });
            try {
                closing.get(10, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                fail("close() still waiting 10 s in: for an application thread's requestCompleted listener (that "
                        + "release's DELETE was answered and its object is gone)");
            }
        } finally {
            unblock.countDown();
        }
    }

    // ------------------------------------------------------------------ rule 14: close() waits one bound in all

    /**
     * GcsLockRegistry#close(): it waits for the releases running elsewhere "at most eight operation timeouts and four
     * write windows in all". A hold-at-least release on the refresher that waits for the lease's I/O lock (held here, as
     * by a refresh that hangs) outlasts that bound. close() waited for the refresher's running task its whole bound, then
     * for the same release in flight its whole bound again: twice its documented wait. Now one deadline covers both.
     */
    @Test
    void closeWaitsOneBoundInAllForAReleaseOnTheRefresherThatOutlastsIt() throws Exception {
        Duration operationTimeout = Duration.ofMillis(500);
        Duration window = Duration.ofMillis(250);
        Duration bound = operationTimeout.multipliedBy(8).plus(window.multipliedBy(4)); // GcsLockRegistry's release bound
        GcsLockRegistry r = registry(b -> b.operationTimeout(operationTimeout).writeRateWindow(window));
        GcsLease lease = (GcsLease) r.acquire("one-bound", Duration.ZERO);
        // A refresh in flight, as the release sees it: another thread holds the lease's I/O lock (not the closing thread:
        // close() on a thread holding it does not wait for what waits for that lock, rule 14).
        CountDownLatch ioHeld = new CountDownLatch(1);
        CountDownLatch letIoGo = new CountDownLatch(1);
        TestThreads.daemon("hung-refresh", () -> {
            lease.lockIo();
            try {
                ioHeld.countDown();
                TestThreads.awaitUninterruptibly(letIoGo, 60);
            } finally {
                lease.unlockIo();
            }
        });
        try {
            assertThat(ioHeld.await(20, TimeUnit.SECONDS)).isTrue();
            r.releaseAfter(lease, Duration.ofMillis(100)); // released on the refresher when the delay ends
            await("the hold-at-least release began").atMost(Duration.ofSeconds(20)).until(lease::isReleasing);
            long t0 = System.nanoTime();
            r.close();
            long took = (System.nanoTime() - t0) / 1_000_000;
            assertThat(took).as("close() waited for the release on the refresher (bound %s)", bound)
                    .isGreaterThanOrEqualTo(bound.toMillis() - 50)
                    .as("close() waited once, not once for the refresher and once more for the releases (bound %s)", bound)
                    .isLessThan(bound.toMillis() * 3 / 2);
        } finally {
            letIoGo.countDown();
        }
        await("the release ended with its object deleted").atMost(Duration.ofSeconds(20)).until(() -> object("one-bound") == null);
    }
}
