package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The defects {@link EngineExplorerPropertyTest} found (issue 29), each pinned deterministically: the shrunk
 * sequence the explorer printed, as a plain test.
 */
class ExplorerFindingsTest extends EmulatorTestBase {

    /**
     * Explorer: {@code P0 tryAcquire('a', ttl FOREVER)} threw {@code ArithmeticException: long overflow}. Rule 19: a TTL
     * above 100 years is refused with a GcsLockConfigurationException naming the lock, and changes nothing.
     */
    @Test
    void aTtlBeyondAHundredYearsIsRefusedNamingTheLock() {
        GcsLockRegistry r = registry();
        for (Duration ttl : List.of(ChronoUnit.FOREVER.getDuration(), ChronoUnit.CENTURIES.getDuration().multipliedBy(2))) {
            assertThatThrownBy(() -> r.tryAcquire("job", ttl)).isInstanceOf(GcsLockConfigurationException.class)
                    .hasMessageContaining("'job'").hasMessageContaining("at most");
            assertThat(object("job")).isNull();
        }
        Lease lease = r.tryAcquire("job").orElseThrow();
        assertThatThrownBy(() -> r.renew(lease, ChronoUnit.FOREVER.getDuration())).isInstanceOf(GcsLockConfigurationException.class);
        assertThat(object("job").getMetadata()).containsEntry("gcslock-ttl", Long.toString(TTL.toMillis()));
        assertThatThrownBy(() -> GcsLockRegistry.builder(storage, BUCKET).ttl(ChronoUnit.FOREVER.getDuration()).verifyBucket(false).build())
                .isInstanceOf(GcsLockConfigurationException.class).hasMessageContaining("ttl");
    }

    /**
     * Rule 19, readers: an object carrying a TTL no reader's arithmetic could hold (written by another process, or a
     * damaged one) is read as 100 years: inspect, list and acquisitions of every process still work.
     */
    @Test
    void anObjectCarryingAHugeTtlIsReadByEveryProcess() throws Exception {
        Map<String, String> meta = Map.of("gcslock-owner", "someone-else#far", "gcslock-lease", "l-far",
                "gcslock-ttl", Long.toString(Long.MAX_VALUE), "gcslock-expires", Instant.now().toString());
        storage.create(BlobInfo.newBuilder(BUCKET, "gcslock/job").setMetadata(meta).build(), new byte[0],
                Storage.BlobTargetOption.doesNotExist());
        GcsLockRegistry r = registry();
        assertThat(r.inspect("job")).get().extracting(LockInfo::ttl).isEqualTo(Duration.ofDays(36_500));
        assertThat(r.list()).hasSize(1);
        assertThat(r.tryAcquire("job")).isEmpty();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(300))).isInstanceOf(LockNotAcquiredException.class);
    }

    /** Explorer: {@code releaseAfter(lease, FOREVER)} overflowed; it holds (refreshed) until close(), which deletes the object. */
    @Test
    void aReleaseAfterForeverHoldsUntilClose() {
        GcsLockRegistry r = registry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        r.releaseAfter(lease, ChronoUnit.FOREVER.getDuration());
        assertThat(lease.isHealthy()).isTrue();
        assertThat(r.tryAcquire("job")).isEmpty(); // rule 13: the name stays taken here
        r.close();
        assertThat(object("job")).isNull();
    }

    /**
     * Explorer: {@code renew(hold[2] of P1, LONG) on another process's registry} refreshed it under the other
     * registry's identity: the lease was lost ("lock object now belongs to P1-0#...") and the TTL in the object
     * changed; {@code releaseAfter} of another registry's lease returned normally. Both now refuse it with an
     * IllegalArgumentException, and nothing changes.
     */
    @Test
    void renewAndReleaseAfterRefuseALeaseOfAnotherRegistry() {
        GcsLockRegistry mine = registry();
        GcsLockRegistry other = registry();
        Lease lease = mine.tryAcquire("job").orElseThrow();
        Blob before = object("job");
        assertThatThrownBy(() -> other.renew(lease, Duration.ofSeconds(3))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a lease of this registry");
        assertThatThrownBy(() -> other.releaseAfter(lease, Duration.ofSeconds(3))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a lease of this registry");
        Lease nested = mine.tryAcquire("job").orElseThrow();
        assertThatThrownBy(() -> other.releaseAfter(nested, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThat(lease.isHealthy()).isTrue();
        Blob after = object("job");
        assertThat(after.getMetadata().get("gcslock-ttl")).isEqualTo(before.getMetadata().get("gcslock-ttl"));
        assertThat(after.getMetadata().get("gcslock-owner")).isEqualTo(mine.owner());
        nested.release();
        lease.release();
        assertThat(object("job")).isNull();
    }

    /**
     * Explorer: {@code P0 listener RELEASED -> THROW_ERROR}, then a release: the listener registered after it was
     * never told released, and was told the next lease's acquired while the lease before was not told released.
     * Rule 20: every listener is told every event, whatever another one threw.
     */
    @Test
    void aListenerThatThrowsAnErrorHidesNoEventFromTheOthers() {
        List<String> told = new CopyOnWriteArrayList<>();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override public void released(Lease lease) { throw new AssertionError("listener broke"); }
            @Override public void lost(Lease lease, LockLostException reason) { throw new AssertionError("listener broke"); }
        }).listener(new LockEventListener() {
            @Override public void released(Lease lease) { told.add("released " + lease.leaseId()); }
            @Override public void lost(Lease lease, LockLostException reason) { told.add("lost " + lease.leaseId()); }
        }));
        Lease first = r.tryAcquire("job").orElseThrow();
        first.release();
        assertThat(told).containsExactly("released " + first.leaseId());

        Lease second = r.tryAcquire("job").orElseThrow();
        second.onLost((l, e) -> { throw new AssertionError("onLost broke"); });
        second.onLost((l, e) -> told.add("onLost " + l.leaseId()));
        Blob b = object("job");
        assertThat(r.forceRelease("job", b.getGeneration(), b.getMetageneration())).isTrue();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(told).contains("onLost " + second.leaseId(), "lost " + second.leaseId()));
        second.release();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(told).contains("released " + second.leaseId()));

        // On the acquiring thread too: an Error of one listener's "acquired" fails the call (its lease handed back),
        // and every other listener is told all the same.
        List<String> toldHere = new CopyOnWriteArrayList<>();
        GcsLockRegistry here = registry(c -> c.listener(new LockEventListener() {
            @Override public void acquired(Lease lease) { throw new AssertionError("listener broke"); }
        }).listener(new LockEventListener() {
            @Override public void acquired(Lease lease) { toldHere.add("acquired"); }
            @Override public void released(Lease lease) { toldHere.add("released"); }
        }));
        assertThatThrownBy(() -> here.tryAcquire("job-here")).isInstanceOf(AssertionError.class).hasMessage("listener broke");
        await("the lease the failed call would have returned, released").atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(toldHere).containsExactly("acquired", "released"));
        assertThat(here.heldLeases()).isEmpty();
        assertThat(object("job-here")).isNull();

        // A refused call: an Error of one listener's notAcquired on the acquiring thread, and no later event of the lock
        // that a listener thread could take the others' reservations over with — they are told there, before it ends.
        List<String> toldRefused = new CopyOnWriteArrayList<>();
        GcsLockRegistry refused = registry(c -> c.listener(new LockEventListener() {
            @Override public void notAcquired(String name, LockInfo holder) { throw new AssertionError("listener broke"); }
        }).listener(new LockEventListener() {
            @Override public void notAcquired(String name, LockInfo holder) { toldRefused.add("notAcquired"); }
        }));
        Lease holding = registry().tryAcquire("job-held").orElseThrow();
        Throwable thrown = catchThrowable(() -> refused.tryAcquire("job-held"));
        assertThat(thrown).isInstanceOf(AssertionError.class).hasMessage("listener broke");
        assertThat(toldRefused).as("the second listener told notAcquired before the refused call ended").containsExactly("notAcquired");
        holding.release();
    }

    /**
     * An Error thrown by an acquireFinished listener after the lease was handed out failed the call and left the
     * lease held (and refreshed) for the life of the process. Rule 20: a call that failed never leaves a lease held.
     */
    @Test
    void anErrorOfAnAcquireFinishedListenerAfterTheHandOutReleasesTheLease() throws Exception {
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
                throw new AssertionError("listener broke");
            }
        }));
        assertThatThrownBy(() -> r.tryAcquire("job")).isInstanceOf(AssertionError.class);
        assertThat(r.heldLeases()).isEmpty();
        assertThat(object("job")).isNull();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofSeconds(1))).isInstanceOf(AssertionError.class);
        assertThat(r.heldLeases()).isEmpty();
        assertThat(object("job")).isNull();
    }

    /**
     * Explorer: {@code P0 listener ACQUIRE_FINISHED -> THROW_ERROR; P0 tryAcquire('a', ttl ZERO)} threw the listener's
     * Error instead of the documented GcsLockConfigurationException. A call that fails keeps its own exception; the
     * listener's Error is attached to it.
     */
    @Test
    void aCallThatFailsKeepsItsDocumentedExceptionWhenAnAcquireFinishedListenerThrows() {
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
                throw new AssertionError("listener broke");
            }
        }));
        assertThatThrownBy(() -> r.tryAcquire("job", Duration.ZERO)).isInstanceOf(GcsLockConfigurationException.class)
                .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
        assertThatThrownBy(() -> r.acquire("job", Duration.ofSeconds(1), Duration.ofSeconds(-1)))
                .isInstanceOf(GcsLockConfigurationException.class);
        assertThat(object("job")).isNull();
    }

    // ------------------------------------------------------------------ close() and releases in flight (rule 14)

    /** Holds the next DELETE of {@code object} in the emulator until {@code go}; {@code arrived} when it got there. */
    private void holdNextDelete(String object, CountDownLatch arrived, CountDownLatch go) {
        gcs.faults().beforeNext(Operation.DELETE, object, () -> {
            arrived.countDown();
            try {
                go.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private GcsLockRegistry slowRegistry() {
        return registry(b -> b.ttl(Duration.ofSeconds(30)).refreshInterval(Duration.ofSeconds(5)).operationTimeout(Duration.ofSeconds(5)));
    }

    /** A second close() returned at once while the first was still deleting the objects: now it waits for the first. */
    @Test
    void aSecondCloseReturnsOnlyWhenTheFirstHasReleasedEverything() throws Exception {
        GcsLockRegistry r = slowRegistry();
        r.tryAcquire("job").orElseThrow();
        secondWaitsForTheFirstsHeldDelete(r::close, r::close, "the second close() returned while the first one's DELETE was in flight");
    }

    /** close() returned while an application thread's release was deleting its object: now it waits for it. */
    @Test
    void closeWaitsForAReleaseInFlightOnAnApplicationThread() throws Exception {
        GcsLockRegistry r = slowRegistry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        secondWaitsForTheFirstsHeldDelete(lease::release, r::close, "close() returned while a release's DELETE was in flight");
    }

    /**
     * Interleaving explorer (seed 4026006727094796465 of {@code EngineInterleavingExplorerTest}, and on today's main e.g.
     * 5075969437459761360 of {@code acquireReleaseAndCloseRacing}): close() took its snapshot and began the release of a
     * held lease (waiting out the write window, then its DELETE); the application's own release() of that lease, on its
     * own thread, found the release begun and returned at once, with the object still in the bucket. Rule 14: a
     * release() racing close()'s release of its lease returns only once that release has ended.
     */
    @Test
    void aReleaseRacingClosesReleaseOfItsLeaseReturnsOnlyOnceTheObjectIsDeleted() throws Exception {
        GcsLockRegistry r = slowRegistry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        AtomicBoolean objectGoneAtReturn = new AtomicBoolean();
        secondWaitsForTheFirstsHeldDelete(r::close, () -> {
            lease.release();
            objectGoneAtReturn.set(object("job") == null);
        }, "release() returned while close()'s DELETE of its object was in flight");
        assertThat(objectGoneAtReturn).as("the object was gone when release() returned").isTrue();
    }

    /** As above on an interrupted application thread: it waits all the same and gets its interrupt flag back. */
    @Test
    void aReleaseRacingCloseOnAnInterruptedThreadWaitsAndKeepsTheFlag() throws Exception {
        GcsLockRegistry r = slowRegistry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        AtomicBoolean flagKept = new AtomicBoolean();
        AtomicBoolean objectGoneAtReturn = new AtomicBoolean();
        secondWaitsForTheFirstsHeldDelete(r::close, () -> {
            Thread.currentThread().interrupt();
            lease.release();
            flagKept.set(Thread.interrupted());
            objectGoneAtReturn.set(object("job") == null);
        }, "an interrupted release() returned while close()'s DELETE was in flight");
        assertThat(objectGoneAtReturn).isTrue();
        assertThat(flagKept).isTrue();
    }

    /**
     * Runs {@code first}, whose DELETE of lock 'job' is held in the emulator, then {@code second}: the second must not
     * return while that DELETE is held ({@code whileHeld} names the failure), and must return with the object gone once
     * it goes; then the first ends too.
     */
    private void secondWaitsForTheFirstsHeldDelete(Runnable first, Runnable second, String whileHeld) throws Exception {
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        holdNextDelete("gcslock/job", arrived, go);
        CompletableFuture<Void> firstCall = CompletableFuture.runAsync(first);
        assertThat(arrived.await(10, TimeUnit.SECONDS)).as("the first call's DELETE reached GCS").isTrue();
        CompletableFuture<Void> secondCall = CompletableFuture.runAsync(second);
        Thread.sleep(300);
        assertThat(secondCall).as(whileHeld).isNotDone();
        go.countDown();
        secondCall.get(20, TimeUnit.SECONDS);
        assertThat(object("job")).as("the object once the second call returned").isNull();
        firstCall.get(20, TimeUnit.SECONDS);
    }

    /**
     * Rule 14, a release counted in flight from its first step: an application thread's release that has begun (the
     * lease has left heldLeases()) but waits for the lease's I/O lock behind a renewal whose PATCH is in flight. close()
     * finds that release begun, leaves it to its thread, and must still wait for it. (Before, the release counted itself
     * in a second step after beginning, so close() could find it begun and not yet counted, and return; a renewal
     * holding the lease's I/O lock widens nothing now that both happen in one step.)
     */
    @Test
    void closeWaitsForAnApplicationReleaseFromItsFirstStep() throws Exception {
        GcsLockRegistry r = slowRegistry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        CountDownLatch patchArrived = new CountDownLatch(1);
        CountDownLatch patchGo = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.PATCH, "gcslock/job", () -> {
            patchArrived.countDown();
            try {
                patchGo.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<Void> renew = CompletableFuture.runAsync(() -> r.renew(lease, null));
        assertThat(patchArrived.await(10, TimeUnit.SECONDS)).isTrue(); // the renewal holds the lease's I/O lock
        CompletableFuture<Void> release = CompletableFuture.runAsync(lease::release);
        await().atMost(Duration.ofSeconds(10)).until(() -> r.heldLeases().isEmpty()); // its release has begun
        CompletableFuture<Void> close = CompletableFuture.runAsync(r::close);
        Thread.sleep(300);
        assertThat(close).as("close() returned while an application release that had begun waited for the I/O lock").isNotDone();
        patchGo.countDown();
        close.get(20, TimeUnit.SECONDS);
        assertThat(object("job")).as("the object at close()'s return").isNull();
        release.get(20, TimeUnit.SECONDS);
        renew.exceptionally(e -> null).get(20, TimeUnit.SECONDS);
    }

    /**
     * The same thread coming back: a listener that runs on the application thread releasing a lease (its DELETE's
     * requestAnswered) calls close(). close() finds that release begun on its own thread, which cannot end while close()
     * waits: it does not wait for it (before, it waited out its whole bound, then logged that it gave up). Since rule 20
     * holds a release's events back until it has ended, the listener runs only after that, so this passes on that alone;
     * the test below pins close()'s own exception for a release on its thread.
     */
    @Test
    void closeCalledByAListenerOfItsOwnThreadsReleaseDoesNotWaitForItself() throws Exception {
        AtomicReference<GcsLockRegistry> registry = new AtomicReference<>();
        AtomicReference<Thread> releasing = new AtomicReference<>();
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(30)).refreshInterval(Duration.ofSeconds(5))
                .operationTimeout(Duration.ofSeconds(5)).listener(new LockEventListener() {
                    @Override public void requestAnswered(String name) {
                        if ("job".equals(name) && Thread.currentThread() == releasing.get()) {
                            releasing.set(null);
                            registry.get().close();
                        }
                    }
                }));
        registry.set(r);
        Lease lease = r.tryAcquire("job").orElseThrow();
        long start = System.nanoTime();
        CompletableFuture<Void> release = CompletableFuture.runAsync(() -> {
            releasing.set(Thread.currentThread());
            lease.release();
        });
        release.get(20, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("release() with close() in its own listener")
                .isLessThan(Duration.ofSeconds(8)); // the bound close() would have waited: 4 x 5 s + 2 windows
        assertThat(object("job")).isNull();
    }

    /**
     * Rule 14, the same thread coming back without a listener: since rule 20 holds a release's events back until it has
     * ended, no listener runs on a releasing thread while its release is in flight (the test above passes on that alone).
     * Code of the application still does: its GCS client's transport sends the release's DELETE on that thread. If that
     * code calls close(), close() finds the release in flight on its own thread, which cannot end while close() waits:
     * it must not wait for it (it would wait out its whole bound, 8 x 5 s here, then give up).
     */
    @Test
    void closeCalledOnAReleasingThreadByTheApplicationsTransportDoesNotWaitForThatRelease() throws Exception {
        AtomicReference<GcsLockRegistry> registry = new AtomicReference<>();
        AtomicReference<Thread> releasing = new AtomicReference<>();
        AtomicBoolean closedInside = new AtomicBoolean();
        HookedTransport transport = new HookedTransport();
        transport.hook = (method, url) -> {
            if (method.equals("DELETE") && url.contains("/o/gcslock%2Fjob") && releasing.compareAndSet(Thread.currentThread(), null)) {
                registry.get().close();
                closedInside.set(true);
            }
        };
        GcsLockRegistry r = registry(transport.client(gcs), b -> b.ttl(Duration.ofSeconds(30))
                .refreshInterval(Duration.ofSeconds(5)).operationTimeout(Duration.ofSeconds(5)));
        registry.set(r);
        Lease lease = r.tryAcquire("job").orElseThrow();
        long start = System.nanoTime();
        CompletableFuture<Void> release = CompletableFuture.runAsync(() -> {
            releasing.set(Thread.currentThread());
            lease.release();
        });
        release.get(20, TimeUnit.SECONDS);
        assertThat(closedInside).as("close() ran on the releasing thread, inside its DELETE's send").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("release() with close() inside its own DELETE")
                .isLessThan(Duration.ofSeconds(8)); // the bound close() would have waited: 8 x 5 s + 4 windows
        assertThat(object("job")).isNull();
    }

    /**
     * Rule 14, the test above with a second close() on another thread: the first close(), called inside the release's
     * DELETE, rightly does not wait for that release; a second close() returned as soon as the first had, with the
     * DELETE still in flight and the object in the bucket (found by {@code EngineInterleavingExplorerTest}
     * {@code closeRacingReleasesInFlight} alone, seed -1013322750959109). It must wait for that release, bounded.
     */
    @Test
    void aSecondCloseWaitsForTheReleaseInsideWhoseDeleteTheFirstCloseRan() throws Exception {
        AtomicReference<GcsLockRegistry> registry = new AtomicReference<>();
        AtomicReference<Thread> releasing = new AtomicReference<>();
        CountDownLatch firstCloseReturned = new CountDownLatch(1);
        CountDownLatch deleteMayGo = new CountDownLatch(1);
        HookedTransport transport = new HookedTransport();
        transport.hook = (method, url) -> {
            if (method.equals("DELETE") && url.contains("/o/gcslock%2Fjob") && releasing.compareAndSet(Thread.currentThread(), null)) {
                registry.get().close();
                firstCloseReturned.countDown();
                try {
                    deleteMayGo.await(20, TimeUnit.SECONDS); // the DELETE is held on its way after the first close() returned
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        GcsLockRegistry r = registry(transport.client(gcs), b -> b.ttl(Duration.ofSeconds(30))
                .refreshInterval(Duration.ofSeconds(5)).operationTimeout(Duration.ofSeconds(5)));
        registry.set(r);
        Lease lease = r.tryAcquire("job").orElseThrow();
        CompletableFuture<Void> release = CompletableFuture.runAsync(() -> {
            releasing.set(Thread.currentThread());
            lease.release();
        });
        try {
            assertThat(firstCloseReturned.await(10, TimeUnit.SECONDS)).as("close() ran inside the release's DELETE").isTrue();
            CompletableFuture<Void> secondClose = CompletableFuture.runAsync(r::close);
            Thread.sleep(300);
            assertThat(secondClose).as("a second close() returned while the release's DELETE was in flight").isNotDone();
            deleteMayGo.countDown();
            secondClose.get(20, TimeUnit.SECONDS);
            assertThat(object("job")).as("the object once the second close() returned").isNull();
            release.get(20, TimeUnit.SECONDS);
        } finally {
            deleteMayGo.countDown();
        }
    }

    /** An interrupted closing thread returned at once, before a hold-at-least release in flight had deleted its object. */
    @Test
    void anInterruptedCloseStillWaitsForAReleaseInFlightAndKeepsTheFlag() throws Exception {
        GcsLockRegistry r = slowRegistry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        holdNextDelete("gcslock/job", arrived, go);
        r.releaseAfter(lease, Duration.ofMillis(50));
        assertThat(arrived.await(10, TimeUnit.SECONDS)).isTrue();
        AtomicBoolean flagKept = new AtomicBoolean();
        CompletableFuture<Void> close = CompletableFuture.runAsync(() -> {
            Thread.currentThread().interrupt();
            r.close();
            flagKept.set(Thread.interrupted());
        });
        Thread.sleep(300);
        assertThat(close).as("an interrupted close() returned while a release's DELETE was in flight").isNotDone();
        go.countDown();
        close.get(20, TimeUnit.SECONDS);
        assertThat(object("job")).isNull();
        assertThat(flagKept).isTrue();
    }

    /** close() released every lease on its own thread, each after the last one's released listeners: a slow one held up the rest. */
    @Test
    void aSlowReleasedListenerOfOneLockDoesNotHoldUpTheReleaseOfAnotherAtClose() throws Exception {
        CountDownLatch listenerMayReturn = new CountDownLatch(1);
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override public void released(Lease lease) {
                if (lease.name().equals("a")) {
                    try {
                        listenerMayReturn.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }));
        r.tryAcquire("a").orElseThrow();
        r.tryAcquire("b").orElseThrow();
        CompletableFuture<Void> close = CompletableFuture.runAsync(r::close);
        try {
            close.get(10, TimeUnit.SECONDS);
            assertThat(object("a")).isNull();
            assertThat(object("b")).isNull();
        } finally {
            listenerMayReturn.countDown();
        }
    }

    /**
     * A waiter whose create committed with its reply lost, ended by an interrupt before its next attempt could adopt
     * the object, left it until its TTL (only close() ending the wait deleted it). Now any end of the wait does.
     */
    @Test
    void aWaiterInterruptedAfterItsCreateReplyWasLostDeletesItsObject() throws Exception {
        GcsLockRegistry r = GcsLockRegistry.builder(gcs.storage("waiter"), BUCKET).ttl(Duration.ofSeconds(30))
                .refreshInterval(Duration.ofSeconds(5)).operationTimeout(Duration.ofMillis(500)).verifyBucket(false)
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0).build();
        try (r) {
            waiterInterrupted(r);
        }
    }

    private void waiterInterrupted(GcsLockRegistry r) throws Exception {
        ClientFaults net = gcs.faults().client("waiter");
        net.partitionAfterNextRequest(ClientFaults.Partition.HANG, Operation.INSERT);
        CompletableFuture<Throwable> waiter = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                r.acquire("job", Duration.ofSeconds(60));
                waiter.complete(null);
            } catch (Throwable e) {
                waiter.complete(e);
            }
        });
        t.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> object("job") != null); // the create committed, its reply is lost
        Thread.sleep(700); // the retries hang in the partition
        t.interrupt();
        Thread.sleep(100);
        net.heal();
        assertThat(waiter.get(20, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(object("job")).as("the interrupted waiter's own create").isNull();
    }

    /**
     * Explorer: {@code P2 listener REQUEST_ANSWERED -> BLOCK; renew(hold[0], LONG)}, then {@code P2 inspect('b')} did not
     * return within 20 s. An application thread that reports its own request's event drained the lock's queue on, so
     * the refresher's events raised meanwhile (each slow, coming faster than they ran) kept the caller without bound.
     * Rule 20: an application thread runs its own event only; the rest go to the listener threads.
     */
    @Test
    void anApplicationThreadRunsOnlyItsOwnEventNotTheOnesRaisedMeanwhile() throws Exception {
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Thread> caller = new AtomicReference<>();
        GcsLockRegistry r = registry(b -> b.refreshInterval(Duration.ofMillis(100)).listener(new LockEventListener() {
            @Override public void requestAnswered(String name) {
                if (!"job".equals(name) || caller.get() == null) {
                    return;
                }
                try {
                    if (Thread.currentThread() == caller.get() && inCall.getCount() > 0) {
                        inCall.countDown();
                        go.await(10, TimeUnit.SECONDS);
                    } else {
                        Thread.sleep(300); // the lock's later events are slow: a stream faster than it drains
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }));
        Lease lease = r.tryAcquire("job").orElseThrow();
        CompletableFuture<Optional<LockInfo>> inspect = CompletableFuture.supplyAsync(() -> {
            caller.set(Thread.currentThread());
            return r.inspect("job");
        });
        assertThat(inCall.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(500); // the lease's refreshes raise events meanwhile, queued behind the caller's own
        go.countDown();
        assertThat(inspect.get(5, TimeUnit.SECONDS)).as("inspect() returns once its own event ran").isPresent();
        caller.set(null);
        lease.release();
    }

    /**
     * Explorer (long run, seed 1600321029638220348): {@code P0 fault DROP_CREATE_REPLY, P0 tryAcquire('a', ttl DECADES,
     * interrupted)}, then every registry closed: the object of the one-shot's create stayed in GCS ("objects left in GCS
     * after every registry's close() returned: [gcslock/a lease ... (never handed out)]"), for its TTL: decades.
     * A one-shot whose create may have committed unseen deletes that create when it ends without the lease, as a
     * waiter does (rules 3, 14).
     */
    @Test
    void aOneShotOnAnInterruptedThreadWhoseCreateReplyWasLostLeavesNoObject() throws Exception {
        GcsLockRegistry r = GcsLockRegistry.builder(gcs.storage("one-shot"), BUCKET).ttl(Duration.ofSeconds(30))
                .refreshInterval(Duration.ofSeconds(5)).operationTimeout(Duration.ofMillis(500)).verifyBucket(false).build();
        try (r) {
            gcs.faults().dropNextReply(Operation.INSERT); // the create commits, its reply is lost
            Thread.currentThread().interrupt();           // so the client's retry, which would adopt it, is cut short
            Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> r.tryAcquire("job", Duration.ofDays(3650)));
            boolean flagKept = Thread.interrupted();
            assertThat(thrown).as("the documented failure of a call whose outcome GCS did not tell").isInstanceOf(GcsLockException.class);
            assertThat(flagKept).as("the interrupt flag comes back").isTrue();
            assertThat(object("job")).as("the object of the one-shot's own create, which handed out no lease").isNull();
        }
        assertThat(object("job")).as("nothing left after close()").isNull();
    }
}
