package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Regression tests for interleavings that broke the engine's promises under faults: lost or slow
 * replies, outages longer than the TTL, hanging requests, close() during a wait. Each test's Javadoc
 * writes down the interleaving; each fails when the rule it pins is removed (see dev/rule-mutations.py).
 */
class EngineSafetyRulesTest extends EmulatorTestBase {

    // ---------------------------------------------------------------- adoption after a long outage

    /**
     * Interleaving (two healthy holders): A's waiting acquire keeps one lease id for the whole wait.
     * Its first create commits but the reply is lost; every later create gets 412 from that object,
     * and those replies are lost too, for longer than the TTL. When replies come back, a create gets
     * 412, the GET shows A's owner and lease id, and A adopts the object. The object was written more
     * than a TTL ago, so B (whose estimate of GCS time is anchored on its own writes) sees it stale,
     * deletes it with matching generation and metageneration, and creates its own lock — while A's
     * lease, dated from its last create, reports healthy.
     *
     * <p>Rule: the adopted object is dated from the earliest create whose outcome was unknown; when
     * that is older than a refresh interval, the object is confirmed with a PATCH guarded by its
     * generation and metageneration before it is handed out (so either A's PATCH or B's delete wins,
     * never both).
     */
    @Test
    void anObjectAdoptedAfterAnOutageLongerThanTheTtlIsConfirmedBeforeItIsHandedOut() throws Exception {
        Duration ttl = Duration.ofSeconds(2); // 1.6 s of health after the confirming PATCH: room for a loaded machine
        GcsLockRegistry a = registry(x -> x.ttl(ttl).refreshInterval(Duration.ofMillis(400)));
        GcsLockRegistry b = registry(x -> x.ttl(ttl).refreshInterval(Duration.ofMillis(400)));
        b.tryAcquire("warm-up").orElseThrow().release(); // anchors B's GCS-time estimate on its own writes
        gcs.faults().dropReplies(1.0, Operation.INSERT);
        CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return a.acquire("job", Duration.ofSeconds(20));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await("A's create, whose reply is dropped, to commit")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job") != null);
        long firstWrite = System.nanoTime();
        await("the TTL plus 300 ms to pass")
                .pollDelay(ttl.plusMillis(300)).atMost(ttl.plusSeconds(2)).until(() -> true);
        assertThat(System.nanoTime() - firstWrite).isGreaterThan(ttl.toNanos());
        gcs.faults().dropReplies(0);
        Lease lease = waiting.get(10, TimeUnit.SECONDS);

        assertThat(lease.isHealthy()).as("the confirmed lease is healthy: " + lease.lostReason().orElse("")).isTrue();
        Optional<Lease> other = b.tryAcquire("job");
        assertThat(other).as("B must not take over a lock A reports healthy").isEmpty();
        assertThat(lease.isHealthy()).isTrue();
        assertThat(object("job").getGeneration()).isEqualTo(lease.fencingToken());
    }

    /**
     * The same adoption after an outage longer than one refresh interval but shorter than the lease's
     * deadline span: the object is still ours and not stale, but it was written up to an outage ago, while
     * the refresher first refreshes one interval after handing the lease out. Handed out as is, the lease
     * would run with less than the normal refresh margin (and a few more lost replies would lose it). Rule
     * 3: it is confirmed with a guarded PATCH first, so it is handed out freshly written, same generation.
     */
    @Test
    void anObjectAdoptedAfterAnOutageLongerThanARefreshIntervalIsConfirmedByAGuardedPatch() throws Exception {
        // TTL 3 s, refresh 900 ms: deadline span 2.4 s; the outage below is 1.4 s (longer than an interval).
        GcsLockRegistry a = registry(x -> x.ttl(Duration.ofSeconds(3)).refreshInterval(Duration.ofMillis(900)));
        gcs.faults().dropReplies(1.0, Operation.INSERT);
        CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return a.acquire("job", Duration.ofSeconds(20));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await("A's create, whose reply is dropped, to commit")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job") != null);
        long created = object("job").getGeneration();
        await("1.4 s to pass").pollDelay(Duration.ofMillis(1400)).atMost(Duration.ofSeconds(3)).until(() -> true);
        gcs.faults().dropReplies(0);
        Lease lease = waiting.get(10, TimeUnit.SECONDS);
        Blob now = object("job"); // read before the first scheduled refresh (900 ms after the hand-out)

        assertThat(lease.isHealthy()).as(lease.lostReason().orElse("")).isTrue();
        assertThat(lease.fencingToken()).as("the object our lost-reply create made, adopted").isEqualTo(created);
        assertThat(now.getMetageneration()).as("confirmed by a PATCH before it was handed out").isGreaterThan(1L);
    }

    // ---------------------------------------------------------------- refresh and release after slow replies

    /**
     * Interleaving (a healthy lease declared lost, its object leaked): refresh R1 (PATCH guarded by
     * metageneration m) is slowed past the operation timeout but still commits (m+1, carrying R1's
     * id); the refresher counts it as a failure. Refresh R2 (still guarded by m) gets 412; the GET
     * shows our owner and lease with R1's id. Remembering only the current refresh's id, the engine
     * declared the lease LOST, and release, deleting with m, got 412 and left the object until the TTL.
     *
     * <p>Rule: a refresh whose outcome is unknown stays adoptable: its id and the metageneration it
     * was guarded by are remembered until a later refresh is confirmed.
     */
    @Test
    void aRefreshThatCommittedAfterItsTimeoutIsAdoptedByTheNextRefresh() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1))
                .operationTimeout(Duration.ofMillis(300)));
        AtomicInteger failures = new AtomicInteger();
        r.addListener(new LockEventListener() {
            @Override
            public void refreshFailed(Lease lease, Exception error) {
                failures.incrementAndGet();
            }
        });
        Lease lease = r.tryAcquire("job").orElseThrow();
        // R1 commits 100 ms after the client gave up on it, and before R2 is sent (one interval later).
        gcs.faults().beforeNext(Operation.PATCH, () -> sleep(400));
        await("the refresh after the late one to commit, or the lease to be lost")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job").getMetageneration() >= 3 || !lease.isHealthy());
        assertThat(failures).as("R1 timed out").hasValue(1);
        assertThat(lease.isHealthy()).as(lease.lostReason().orElse("healthy")).isTrue();
        lease.release();
        assertThat(object("job")).as("released").isNull();
    }

    /**
     * Interleaving (leak): the last refresh commits after its timeout (m → m+1) and the holder then
     * releases before another refresh: the DELETE guarded by m gets 412, which was read as "taken
     * over", so our object stayed until its TTL and blocked every other process.
     *
     * <p>Rule: a release that meets 412 reads the object once; if it is still ours (same generation,
     * our owner and lease) it deletes it guarded by the generation and metageneration it read.
     */
    @Test
    void releaseAfterARefreshWhoseReplyCameTooLateStillDeletesTheObject() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1))
                .operationTimeout(Duration.ofMillis(300)));
        Lease lease = r.tryAcquire("job").orElseThrow();
        gcs.faults().beforeNext(Operation.PATCH, () -> sleep(400));
        // The slow PATCH has committed (metageneration 2) but the engine only knows metageneration 1;
        // the next refresh is still ~900 ms away.
        await("the slow refresh PATCH to commit (metageneration 2)")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job").getMetageneration() == 2);
        lease.release();
        assertThat(object("job")).as("our object is deleted even though our last refresh was unconfirmed").isNull();
    }

    /**
     * A release that meets 412 re-reads the object and deletes it only if it is still ours: here the
     * object (same generation, so the guarded DELETE answers 412 rather than 404) was rewritten by
     * someone else as theirs, and must be left alone.
     */
    @Test
    void releaseThatMeets412LeavesAnObjectThatIsNoLongerOurs() {
        GcsLockRegistry a = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1)));
        Lease lease = a.tryAcquire("job").orElseThrow();
        Blob ours = object("job");
        storage.update(com.google.cloud.storage.BlobInfo.newBuilder(ours.getBlobId())
                        .setMetadata(java.util.Map.of("gcslock-owner", "someone-else#x", "gcslock-lease", "l-foreign")).build(),
                com.google.cloud.storage.Storage.BlobTargetOption.metagenerationMatch(ours.getMetageneration()));
        lease.release();
        Blob after = object("job");
        assertThat(after).as("someone else's object is not deleted").isNotNull();
        assertThat(after.getMetadata()).containsEntry("gcslock-owner", "someone-else#x");
    }

    // ---------------------------------------------------------------- close() against waiters and creates

    /**
     * Interleaving (a lease nobody refreshes or releases): thread T waits in {@code acquire("job")} while
     * another process holds it, and thread T2 of the same process queues locally behind T. {@code close()}
     * releases a snapshot of the held leases and stops the refresher, but the wait loop never looked at
     * {@code closed} again: when the holder released, T created the object and got a lease nobody
     * refreshed or released, and the object stayed until its TTL.
     *
     * <p>Rule: close() wakes every waiter, in the GCS wait and in the local queue, and each fails with
     * an exception that says the registry was closed.
     */
    @Test
    void closeWakesEveryWaiterWhichFailsWithAClearException() throws Exception {
        GcsLockRegistry otherProcess = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1)));
        Lease held = otherProcess.tryAcquire("job").orElseThrow();
        GcsLockRegistry r = registry();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            gcs.faults().resetCounters();
            Future<Lease> gcsWaiter = threads.submit(() -> r.acquire("job", Duration.ofSeconds(30)));
            await("the GCS waiter's first create")
                    .atMost(Duration.ofSeconds(30)).until(() -> gcs.faults().requestCount(Operation.INSERT) >= 1);
            Future<Lease> localWaiter = threads.submit(() -> r.acquire("job", Duration.ofSeconds(30)));
            sleep(100); // let T2 queue on the local permit
            r.close();
            for (Future<Lease> waiter : java.util.List.of(gcsWaiter, localWaiter)) {
                assertThatThrownBy(() -> waiter.get(5, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(IllegalStateException.class)
                        .cause().hasMessageContaining("'job'").hasMessageContaining("closed");
            }
            held.release();
            await("the lock to stay free for 300 ms after the foreign holder released it")
                    .during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> object("job") == null);
            assertThat(r.heldLeases()).isEmpty();
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * Interleaving: a create is in flight when close() runs (close() releases its snapshot of the held
     * leases and stops the refresher); the create then commits and the lease was handed out unrefreshed,
     * its object left until the TTL.
     *
     * <p>Rule: handing out a lease and close() are serialised: a lease whose create finishes after
     * close() began is not handed out, and its object is deleted.
     */
    @Test
    void aCreateThatRacesCloseEndsWithItsObjectDeleted() throws Exception {
        GcsLockRegistry r = registry(b -> b.operationTimeout(Duration.ofSeconds(5)));
        // close() begins while the create is in flight (on another thread: close() waits for that create, rule 14)
        java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CompletableFuture<Void>> closing =
                new java.util.concurrent.atomic.AtomicReference<>();
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            closing.set(java.util.concurrent.CompletableFuture.runAsync(r::close));
            sleep(300); // close() has marked the registry closed and waits for this create
        });
        assertThatThrownBy(() -> r.tryAcquire("job")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'job'").hasMessageContaining("closed");
        closing.get().get(20, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(object("job")).isNull();
        assertThat(r.heldLeases()).isEmpty();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofSeconds(1))).isInstanceOf(IllegalStateException.class);
    }

    // ---------------------------------------------------------------- issue 16: engine side

    /**
     * Interleaving (issue 16 item 6): a listener's {@code acquired} (an
     * {@code ApplicationListener<GcsLockAcquiredEvent>}) throws an {@link Error} after the lease was
     * registered. Only RuntimeException was caught, so the Error escaped with the lease registered,
     * refreshed forever and its local permit held: the lock leaked for the life of the process.
     *
     * <p>Rule: a failure while handing out a lease releases it (object deleted, permit given back).
     */
    @Test
    void anErrorThrownByAListenerWhileHandingOutALeaseReleasesIt() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(true);
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                if (fail.get()) {
                    throw new AssertionError("listener broke");
                }
            }
        }));
        assertThatThrownBy(() -> r.tryAcquire("job")).isInstanceOf(AssertionError.class);
        assertThat(r.heldLeases()).isEmpty();
        assertThat(object("job")).isNull();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofSeconds(1))).isInstanceOf(AssertionError.class);
        assertThat(r.heldLeases()).isEmpty();
        assertThat(object("job")).isNull();
        fail.set(false);
        Lease lease = r.acquire("job", Duration.ZERO); // the local permit was given back
        assertThat(lease.isHealthy()).isTrue();
    }

    /**
     * Interleaving (issue 16 item 2): a lease being released is no longer healthy but stayed in
     * {@code heldLeases()} until its DELETE returned (about a second after a 429), so the health check
     * counted it as lost and probes saw DOWN during every normal release.
     *
     * <p>Rule: a lease leaves heldLeases() when its release begins; it is not reported lost.
     */
    @Test
    void aLeaseLeavesHeldLeasesWhenItsReleaseBegins() throws Exception {
        // A long operation timeout keeps the DELETE (and so the release) in flight until the test lets go.
        GcsLockRegistry r = registry(b -> b.operationTimeout(Duration.ofSeconds(10)));
        Lease lease = r.tryAcquire("job").orElseThrow();
        CountDownLatch inDelete = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.DELETE, () -> {
            inDelete.countDown();
            try {
                letGo.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<Void> release = CompletableFuture.runAsync(lease::release);
        try {
            assertThat(inDelete.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(r.heldLeases()).as("released leases are not held").isEmpty();
            assertThat(lease.lostReason()).as("a release is not a loss").isEmpty();
            assertThat(release).as("the release is still in flight while we look").isNotDone();
        } finally {
            letGo.countDown();
        }
        release.get(5, TimeUnit.SECONDS);
        assertThat(object("job")).isNull();
    }

    // ---------------------------------------------------------------- deadlines and listeners independent of I/O

    /**
     * Interleaving (lost notifications after the TTL): twelve leases of one registry; then every request
     * to GCS hangs for longer than the TTL. The deadline tasks shared the refresher's two threads with
     * the refresh calls, which block for the whole operation timeout, so they queued behind them: onLost,
     * the lost event and the WARN line came about twice the TTL after the last refresh — after another
     * process may already have taken the lock over and started the same work.
     *
     * <p>Rule: the LOST transition happens on a timer that never waits behind I/O, and its callbacks run
     * on the listener threads, so each fires before the TTL has passed in GCS time since the lease's last
     * write (the emulator's clock is GCS time here; {@code expiresAt()} is that write's {@code updated} + TTL).
     */
    @Test
    void everyLostCallbackFiresBeforeTheTtlWhenRequestsHang() {
        int count = 12;
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(300))
                .safetyMargin(Duration.ofMillis(800)).operationTimeout(Duration.ofSeconds(10)));
        Map<String, Instant> toldAt = new ConcurrentHashMap<>();
        Map<String, Instant> expiresAt = new ConcurrentHashMap<>();
        Map<String, Instant> eventAt = new ConcurrentHashMap<>();
        r.addListener(new LockEventListener() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                eventAt.put(lease.name(), Instant.now());
            }
        });
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Lease lease = r.tryAcquire("job-" + i).orElseThrow();
            lease.onLost((l, e) -> {
                toldAt.put(l.name(), Instant.now()); // GCS time: the emulator writes updated from this clock
                expiresAt.put(l.name(), l.expiresAt());
            });
            leases.add(lease);
        }
        gcs.faults().latency(Duration.ofSeconds(6), Duration.ofSeconds(6)); // GCS hangs past the TTL
        await("every lease's onLost listener and lost event while GCS hangs past the TTL")
                .atMost(Duration.ofSeconds(30)).until(() -> toldAt.size() == count && eventAt.size() == count);
        for (Lease lease : leases) {
            assertThat(toldAt.get(lease.name())).as("onLost of " + lease.name()).isBefore(expiresAt.get(lease.name()));
            assertThat(eventAt.get(lease.name())).as("lost event of " + lease.name()).isBefore(expiresAt.get(lease.name()));
            assertThat(lease.lostReason()).hasValueSatisfying(s -> assertThat(s).contains("no refresh was confirmed"));
        }
    }

    /**
     * Interleaving (issue 16 item 3): a lost-lease listener that sends an alert over HTTP (blocks for
     * seconds) ran on a refresher thread while holding that lease's I/O lock. Two such losses blocked
     * both refresher threads, and an untouched, healthy lease missed its refreshes and was declared lost.
     *
     * <p>Rule: listeners run on their own threads (in order per lock), never on the threads that refresh
     * leases or enforce deadlines; a slow listener delays no other lease.
     */
    @Test
    void aSlowListenerDoesNotDelayTheRefreshesOfAnotherLease() {
        CountDownLatch alertSent = new CountDownLatch(1);
        List<String> lostListenerThreads = new CopyOnWriteArrayList<>();
        // Refresh threads bounded at 2, so that two slow lost listeners on the refresh threads that raised their
        // events would hold both (the pool otherwise grows with demand and hides where listeners run); and the
        // threads the listener ran on are checked, because a LOST raised by the deadline timer or by a caller's
        // isHealthy() would not hold a refresh thread at all.
        GcsLockRegistry r = registry(b -> b.refresherThreads(2).listener(new LockEventListener() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                lostListenerThreads.add(Thread.currentThread().getName());
                try {
                    alertSent.await(10, TimeUnit.SECONDS); // an alert over a slow network
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }));
        Lease a1 = r.tryAcquire("a1").orElseThrow();
        Lease a2 = r.tryAcquire("a2").orElseThrow();
        Lease healthy = r.tryAcquire("b").orElseThrow();
        try {
            storage.delete(object("a1").getBlobId()); // an administrator removes two locks: both leases are lost
            storage.delete(object("a2").getBlobId());
            await("leases a1 and a2 to be lost after their objects were deleted")
                    .atMost(Duration.ofSeconds(30)).until(() -> !a1.isHealthy() && !a2.isHealthy());
            long before = object("b").getMetageneration();
            await("lease b to be refreshed 3 more times while the lost listeners of a1 and a2 hang")
                    .atMost(Duration.ofSeconds(30)).until(() -> object("b").getMetageneration() >= before + 3);
            assertThat(healthy.isHealthy()).as(healthy.lostReason().orElse("healthy")).isTrue();
            await("the slow lost listener to run for both a1 and a2")
                    .atMost(Duration.ofSeconds(30)).until(() -> lostListenerThreads.size() == 2);
            assertThat(lostListenerThreads).as("the threads the slow lost listener ran on (rule 20: listener threads only)")
                    .allMatch(name -> name.startsWith("gcslock-events-"));
        } finally {
            alertSent.countDown();
        }
    }

    /**
     * The events of one lock arrive in the order they were raised, even when a listener is slow: a
     * release raised on the caller's thread while the lost event still runs on a listener thread waits
     * behind it.
     */
    @Test
    void eventsOfOneLockArriveInOrderWhenAListenerIsSlow() {
        List<String> seen = new CopyOnWriteArrayList<>();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                sleep(300);
                seen.add("lost");
            }

            @Override
            public void released(Lease lease) {
                seen.add("released");
            }
        }));
        Lease lease = r.tryAcquire("job").orElseThrow();
        storage.delete(object("job").getBlobId());
        await("the lease to be lost after its object was deleted")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        lease.release();
        await("the lost and the released event").atMost(Duration.ofSeconds(30)).until(() -> seen.size() == 2);
        assertThat(seen).containsExactly("lost", "released");
    }

    // ---------------------------------------------------------------- fencing tokens

    /**
     * GCS documents generations as unique, not as increasing. Interleaving this process can see: it
     * held a name with generation G, and later acquires the same name with a generation not greater
     * than G (here: the storage behind the same endpoint restarted with its clock an hour behind, so its
     * microsecond-timestamp generations went back). A fenced resource that refuses tokens below the last
     * it accepted would refuse the new holder's writes without anyone knowing why.
     *
     * <p>Rule: an acquisition whose generation is not greater than one seen before for the name logs a
     * WARN and tells the listeners ({@code fencingTokenRegression}); the lease is still handed out.
     */
    @Test
    void anAcquisitionWhoseFencingTokenDidNotIncreaseIsReported() {
        List<long[]> regressions = new CopyOnWriteArrayList<>();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void fencingTokenRegression(Lease lease, long highestSeenBefore) {
                regressions.add(new long[] {lease.fencingToken(), highestSeenBefore});
            }
        }));
        Lease first = r.tryAcquire("job").orElseThrow();
        long firstToken = first.fencingToken();
        first.release();
        Lease again = r.tryAcquire("job").orElseThrow(); // generations increased: nothing to report
        long secondToken = again.fencingToken();
        again.release();
        assertThat(regressions).isEmpty();

        int port = gcs.port();
        gcs.close();
        gcs = io.github.gcslock.test.GcsEmulator.start(port); // same endpoint, fresh state
        gcs.createBucket(BUCKET);
        gcs.clockOffset(Duration.ofHours(-1)); // its generations are an hour's microseconds lower

        Lease third = r.tryAcquire("job").orElseThrow();
        assertThat(third.fencingToken()).isLessThan(secondToken).isLessThan(firstToken);
        assertThat(regressions).singleElement().satisfies(x -> {
            assertThat(x[0]).isEqualTo(third.fencingToken());
            assertThat(x[1]).isEqualTo(secondToken);
        });
        assertThat(third.isHealthy()).isTrue();
    }

    /** Adopting our own create after a lost reply (the generation we read is the one we hold) is no regression. */
    @Test
    void adoptingOurOwnCreateIsNotAFencingRegression() {
        AtomicInteger regressions = new AtomicInteger();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void fencingTokenRegression(Lease lease, long highestSeenBefore) {
                regressions.incrementAndGet();
            }
        }));
        gcs.faults().dropNextReply(Operation.INSERT);
        Lease lease = r.tryAcquire("job").orElseThrow();
        assertThat(lease.fencingToken()).isEqualTo(object("job").getGeneration());
        assertThat(regressions).hasValue(0);
    }
}
