package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Third review of the engine changes of issue 21 (renewals e6a3176; event order, close, interrupted release
 * b6787f4), through the public API and the emulator's fault hooks. Each test names its interleaving.
 */
class EngineReview3Test extends EmulatorTestBase {

    private final List<GcsLockRegistry> mine = new ArrayList<>();
    private final List<CountDownLatch> toOpen = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeMine() {
        toOpen.forEach(CountDownLatch::countDown);
        gcs.faults().reset();
        mine.forEach(GcsLockRegistry::close);
    }

    private GcsLockRegistry through(String client, Duration ttl, Duration refresh, Duration operationTimeout,
                                    LockEventListener listener) {
        GcsLockRegistry r = GcsLockRegistry.builder(gcs.storage(client), BUCKET)
                .ttl(ttl).refreshInterval(refresh).maxRefreshFailures(3)
                .operationTimeout(operationTimeout)
                .writeRateWindow(Duration.ofMillis(20))
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0)
                .listener(listener)
                .build();
        mine.add(r);
        return r;
    }

    private long storedTtlMillis(String name) {
        Blob b = object(name);
        return b == null ? -1 : Long.parseLong(b.getMetadata().get("gcslock-ttl"));
    }

    private static boolean parked(Thread t) {
        Thread.State s = t.getState();
        return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING;
    }

    private static boolean parkedIn(Thread t, Class<?> where) {
        return parked(t) && Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().startsWith(where.getName()));
    }

    // ------------------------------------------------------------------ renewals (e6a3176)

    /**
     * Interleaving: two threads renew one lease at once — renew(lease, 2 s) then renew(lease, 30 s) — while a
     * third renewal's PATCH (slow reply, within the timeout) holds the lease's I/O. Both retarget before either
     * writes, so the first to write sends the *last* target (30 s). That write commits; then the holder's network
     * goes (a crash), so the second renewal fails. renew(lease, 2 s) returned normally, renew(lease, 30 s) threw
     * ("changed nothing"), yet the object says 30 s: a crashed holder keeps its lock 30 s instead of 2 s.
     */
    @Test
    void concurrentRenewalsEachReturnOnlyWithTheirOwnTtlInTheObject() throws Exception {
        GcsLockRegistry r = through("h", Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofMillis(500),
                new LockEventListener() { });
        Lease lease = r.tryAcquire("renew-race").orElseThrow();

        gcs.faults().client("h").slowReplies(1, Duration.ofMillis(400));
        Thread r0 = new Thread(() -> r.renew(lease, null), "r0");
        r0.start();
        await("the holder's first renewal PATCH to commit with its reply held back")
                .atMost(Duration.ofSeconds(30)).until(() -> gcs.faults().client("h").slowedReplies() >= 1);
        // r0's PATCH has committed; its reply is held back. The next PATCH is one of the two renewals below;
        // the holder's network goes right after it (every later request of the holder is refused).
        gcs.faults().beforeNext(Operation.PATCH, () -> gcs.faults().client("h").partition(ClientFaults.Partition.FAIL));

        AtomicReference<Object> shorter = new AtomicReference<>();
        AtomicReference<Object> longer = new AtomicReference<>();
        Thread t1 = new Thread(() -> {
            try {
                r.renew(lease, Duration.ofSeconds(2));
                shorter.set("returned");
            } catch (RuntimeException e) {
                shorter.set(e);
            }
        }, "renew-2s");
        t1.start();
        await("renew(2 s) to queue behind the first renewal on the lease's lock")
                .atMost(Duration.ofSeconds(30)).until(() -> parkedIn(t1, java.util.concurrent.locks.ReentrantLock.class));
        Thread t2 = new Thread(() -> {
            try {
                r.renew(lease, Duration.ofSeconds(30));
                longer.set("returned");
            } catch (RuntimeException e) {
                longer.set(e);
            }
        }, "renew-30s");
        t2.start();
        await("renew(30 s) to queue behind the first renewal on the lease's lock")
                .atMost(Duration.ofSeconds(30)).until(() -> parkedIn(t2, java.util.concurrent.locks.ReentrantLock.class));
        r0.join(5000);
        t1.join(5000);
        t2.join(5000);

        long ttl = storedTtlMillis("renew-race");
        if ("returned".equals(shorter.get())) {
            assertThat(ttl).as("renew(lease, 2 s) returned normally (renew(lease, 30 s): %s); the object's gcslock-ttl",
                    longer.get()).isEqualTo(2000);
        } else {
            assertThat(ttl).as("renew(lease, 30 s) returned (renew(lease, 2 s): %s)", shorter.get()).isEqualTo(30_000);
        }
    }

    /**
     * Interleaving: a 30 s lease renewed to 2 s (the renewal's reply is dropped: the client's retry meets 412 and
     * the engine adopts its own write), then the holder crashes (partitioned). Another process must take over within
     * about 2 s of the renewal, and the crashed holder's lease must be unhealthy by then. Expected to hold.
     */
    @Test
    void aRenewalToAShorterTtlWhoseReplyWasDroppedBoundsTheTakeover() {
        GcsLockRegistry r = through("h", Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofMillis(500),
                new LockEventListener() { });
        Lease lease = r.tryAcquire("renew-crash").orElseThrow();
        gcs.faults().dropNextReply(Operation.PATCH);
        r.renew(lease, Duration.ofSeconds(2));
        long renewed = System.nanoTime();
        assertThat(storedTtlMillis("renew-crash")).isEqualTo(2000);
        gcs.faults().client("h").partition(ClientFaults.Partition.HANG);

        GcsLockRegistry other = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(250)));
        AtomicReference<Boolean> holderHealthyAtTakeover = new AtomicReference<>();
        AtomicReference<Lease> taken = new AtomicReference<>();
        await("another registry to take the lock over after the holder was cut off")
                .atMost(Duration.ofSeconds(8)).pollInterval(Duration.ofMillis(50)).until(() -> {
            Optional<Lease> l = other.tryAcquire("renew-crash");
            if (l.isPresent()) {
                holderHealthyAtTakeover.set(lease.isHealthy());
                taken.set(l.get());
            }
            return l.isPresent();
        });
        long tookMs = (System.nanoTime() - renewed) / 1_000_000;
        System.out.println("[review] takeover after renew(2 s) + crash: " + tookMs + " ms");
        assertThat(holderHealthyAtTakeover.get()).as("the crashed holder's lease at the takeover").isFalse();
        assertThat(tookMs).as("takeover bound of the renewed TTL").isLessThan(5000);
        taken.get().release();
    }

    // ------------------------------------------------------------------ events (b6787f4)

    /**
     * Interleaving: lease 1's {@code lost} listener hangs (an alert over a dead network); the application releases
     * lease 1; another thread asks for the free name with {@code tryAcquire} (a one-shot, which never waits). Its create
     * commits and the lease is registered and refreshed, but the thread then waits, without bound and deaf to
     * interrupts, for lease 1's listener before "acquired": the call does not return, and the lock is held in GCS by
     * a call nobody got a lease from — no other process can run the job for as long as the listener hangs.
     */
    @Test
    void aHungLostListenerOfTheLastLeaseDoesNotHangTheNextOneShotAcquisition() throws Exception {
        CountDownLatch lostStarted = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        toOpen.add(letGo);
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                lostStarted.countDown();
                try {
                    letGo.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }));
        Lease first = r.tryAcquire("hung-listener").orElseThrow();
        storage.delete(BlobId.of(BUCKET, "gcslock/hung-listener")); // lease 1 is lost at its next refresh
        assertThat(lostStarted.await(10, TimeUnit.SECONDS)).isTrue();
        first.release();

        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                result.set(r.tryAcquire("hung-listener"));
            } catch (Throwable e) {
                result.set(e);
            }
        }, "one-shot");
        t.start();
        t.join(2000);
        t.interrupt();
        t.join(2000);
        boolean returned = !t.isAlive();
        Blob held = object("hung-listener");
        Optional<Lease> otherProcess = registry().tryAcquire("hung-listener");
        sleep(1500); // more than the 1 s TTL: the object is refreshed all along
        Optional<Lease> otherProcessLater = registry().tryAcquire("hung-listener");
        assertThat(returned).as("tryAcquire of a free name returned within 4 s (interrupted after 2 s) while lease 1's "
                        + "lost listener hung; thread state %s; object in GCS: %s; another process got the lock: %s, 1.5 s later: %s",
                t.getState(), held == null ? "none" : "gen " + held.getGeneration(), otherProcess.isPresent(),
                otherProcessLater.isPresent()).isTrue();
    }

    /**
     * Interleaving: lease 1 is lost and its {@code lost} listener is slow; the application releases lease 1; another
     * process takes the name; a thread here tries again and is refused. {@code notAcquired} of the name runs on that
     * thread at once — during lease 1's {@code lost} and before its {@code released} — although the events of one lock
     * are promised one at a time, in order, across leases.
     */
    @Test
    void eventsOfOneLockDoNotOverlapWhenTheNextCallIsRefused() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        CountDownLatch lostStarted = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        toOpen.add(letGo);
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                events.add("lost 1");
                lostStarted.countDown();
                try {
                    letGo.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                events.add("lost-done 1");
            }

            @Override
            public void notAcquired(String name, LockInfo holder) {
                events.add("notAcquired");
            }

            @Override
            public void released(Lease lease) {
                events.add("released 1");
            }
        }));
        Lease first = r.tryAcquire("overlap").orElseThrow();
        storage.delete(BlobId.of(BUCKET, "gcslock/overlap"));
        assertThat(lostStarted.await(10, TimeUnit.SECONDS)).isTrue();
        first.release();
        Lease foreign = holder().tryAcquire("overlap").orElseThrow();
        assertThat(r.tryAcquire("overlap")).isEmpty();
        letGo.countDown();
        await("lease 1's \"released\" event after its hung lost listener was let go")
                .atMost(Duration.ofSeconds(30)).until(() -> events.contains("released 1"));
        foreign.release();
        assertThat(events).as("events of lock 'overlap' in order, one at a time")
                .containsExactly("lost 1", "lost-done 1", "released 1", "notAcquired");
    }

    // ------------------------------------------------------------------ interrupted release (b6787f4)

    /**
     * Interleaving: a refresh of ours commits but its reply comes after the timeout (metageneration moved unseen);
     * the task is cancelled while it releases: the DELETE meets 412, the release reads the object (still ours) and
     * deletes it guarded by what it read — that DELETE meets a transient 503, and the cancel's interrupt lands during
     * the client's retry backoff. The release gives up and the object stays for its TTL. (Rule 12: "a lease ends with
     * its object deleted whenever the object is still ours", "whatever the thread's interrupt flag says".)
     */
    @Test
    void anInterruptDuringTheReleaseOfAnObjectMovedByOurOwnLateRefreshDoesNotLeaveIt() throws Exception {
        releaseAfterALateRefreshWith412Then503(true);
    }

    /** Control for the test above: the same faults without the interrupt — the object is deleted. */
    @Test
    void controlTheSameReleaseWithoutAnInterruptDeletesTheObject() throws Exception {
        releaseAfterALateRefreshWith412Then503(false);
    }

    private void releaseAfterALateRefreshWith412Then503(boolean interrupt) throws Exception {
        CountDownLatch refreshFailed = new CountDownLatch(1);
        GcsLockRegistry r = through("h", Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofMillis(500),
                new LockEventListener() {
                    @Override
                    public void refreshFailed(Lease lease, Exception error) {
                        refreshFailed.countDown();
                    }
                });
        Lease lease = r.tryAcquire("cancelled-release").orElseThrow();
        gcs.faults().client("h").slowReplies(1, Duration.ofMillis(800)); // the next request: the scheduled refresh
        assertThat(refreshFailed.await(10, TimeUnit.SECONDS)).isTrue();

        AtomicReference<Thread> releaser = new AtomicReference<>();
        gcs.faults().beforeNext(Operation.GET, () -> {
            // The release read the object after its DELETE met 412; its guarded DELETE of what it read meets 503 twice.
            gcs.faults().failNext(2, 503, Operation.DELETE);
            if (interrupt) {
                Thread target = releaser.get();
                new Thread(() -> {
                    sleep(30);
                    target.interrupt(); // the cancel lands while the client backs off before its retry
                }).start();
            }
        });
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        Thread t = new Thread(() -> {
            lease.release();
            flagAfter.set(Thread.interrupted());
        }, "cancelled-task");
        releaser.set(t);
        t.start();
        t.join(10_000);
        assertThat(gcs.faults().requestCount(Operation.DELETE)).as("DELETEs sent").isGreaterThanOrEqualTo(2);
        assertThat(object("cancelled-release")).as("the lock object after the release returned (interrupt: %s, flag after: %s)",
                interrupt, flagAfter.get()).isNull();
    }

    /**
     * Interleaving: a cancelled task's release meets 429 (write limit) and is interrupted twice during the client's
     * retry backoffs (Future.cancel(true), then the executor's shutdownNow). The release resends once after an
     * interrupt, not more: the object stays for its TTL.
     */
    @Test
    void aReleaseInterruptedTwiceDuringItsRetriesStillDeletesTheObject() throws Exception {
        releaseThrough429s(2);
    }

    /** Control for the test above: the same 429s without interrupts — the object is deleted. */
    @Test
    void controlTheSame429sWithoutInterruptsDeleteTheObject() throws Exception {
        releaseThrough429s(0);
    }

    /** The same 429s with one interrupt during the retrying client's backoff: the release sends once more and deletes. */
    @Test
    void aReleaseInterruptedOnceDuringItsRetriesDeletesTheObject() throws Exception {
        releaseThrough429s(1);
    }

    private void releaseThrough429s(int interrupts) throws Exception {
        GcsLockRegistry r = registry();
        Lease lease = r.tryAcquire("twice-interrupted").orElseThrow();
        AtomicReference<Thread> releaser = new AtomicReference<>();
        Runnable interruptSoon = () -> {
            Thread target = releaser.get();
            new Thread(() -> {
                sleep(20);
                target.interrupt();
            }).start();
        };
        gcs.faults().failNext(4, 429, Operation.DELETE);
        Runnable none = () -> { };
        gcs.faults().beforeNext(Operation.DELETE, none); // the single try
        gcs.faults().beforeNext(Operation.DELETE, interrupts >= 1 ? interruptSoon : none); // the retrying client's first try
        gcs.faults().beforeNext(Operation.DELETE, none);
        gcs.faults().beforeNext(Operation.DELETE, interrupts >= 2 ? interruptSoon : none);
        gcs.faults().beforeNext(Operation.DELETE, interrupts >= 2 ? interruptSoon : none);
        Thread t = new Thread(lease::release, "cancelled-twice");
        releaser.set(t);
        t.start();
        t.join(10_000);
        assertThat(object("twice-interrupted")).as("the lock object after the release returned (%d interrupts, %d DELETEs sent)",
                interrupts, gcs.faults().requestCount(Operation.DELETE)).isNull();
    }

    /**
     * Interleaving: lease 1 is lost and its {@code lost} listener is slow; the storage behind the endpoint restarts
     * with its clock an hour behind (generations go down); the application releases lease 1 and another thread
     * acquires the name (lease 2) while that listener still runs. {@code fencingTokenRegression(lease 2)} — an
     * event of lease 2, "before acquired" — runs on the acquiring thread at once: during {@code lost 1} and before
     * {@code released 1}, the overlap b6787f4 closed for {@code acquired}.
     */
    @Test
    void aFencingRegressionOfTheNextLeaseComesAfterEveryEventOfTheLeaseBefore() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        CountDownLatch lostStarted = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        toOpen.add(letGo);
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
            public void fencingTokenRegression(Lease lease, long highestSeenBefore) {
                events.add("fencingTokenRegression " + which(lease));
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                events.add("lost " + which(lease));
                lostStarted.countDown();
                try {
                    letGo.await(10, TimeUnit.SECONDS);
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
        first.set(r.tryAcquire("fenced").orElseThrow());
        storage.delete(BlobId.of(BUCKET, "gcslock/fenced"));
        assertThat(lostStarted.await(10, TimeUnit.SECONDS)).isTrue();

        int port = gcs.port();
        gcs.close();
        gcs = io.github.gcslock.test.GcsEmulator.start(port); // same endpoint, fresh state
        gcs.createBucket(BUCKET);
        gcs.clockOffset(Duration.ofHours(-1)); // its generations are an hour's microseconds lower
        first.get().release();

        AtomicReference<Lease> second = new AtomicReference<>();
        Thread acquirer = new Thread(() -> second.set(r.tryAcquire("fenced").orElseThrow()), "second-acquirer");
        acquirer.start();
        // "acquired 2" ran, or the acquiring thread waits for lease 1's events, or it returned with its events queued
        await("the second acquisition to run \"acquired 2\", wait for lease 1's events, or return")
                .atMost(Duration.ofSeconds(30)).until(() -> events.contains("acquired 2")
                || parkedIn(acquirer, LockEventDispatcher.class) || !acquirer.isAlive());
        letGo.countDown();
        acquirer.join(10_000);
        second.get().release();
        await("lease 2's \"released\" event").atMost(Duration.ofSeconds(30)).until(() -> events.contains("released 2"));
        System.out.println("[review] fenced events: " + events);
        assertThat(events).as("events of lock 'fenced', one at a time and in order across leases")
                .containsExactly("acquired 1", "lost 1", "lost-done 1", "released 1", "fencingTokenRegression 2", "acquired 2",
                        "released 2");
    }

    /**
     * Interleaving: a cancelled task (interrupt flag set) extends its lease — renew(lease, ttl), as ShedLock's
     * {@code extend} does — and GCS answers the PATCH 429 (a write within the object's write window). The client's
     * retry backoff is interrupted at once. Does the renewal survive, and does the lease stay healthy after three such
     * renewals while GCS is healthy? (The release path clears the flag for its guarded delete; renew does not.)
     */
    @Test
    void renewalsOnAnInterruptedThreadAfterA429DoNotLoseAHealthyLease() {
        GcsLockRegistry r = through("h", Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofMillis(500),
                new LockEventListener() { });
        Lease lease = r.tryAcquire("interrupted-renew").orElseThrow();
        List<String> outcomes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            gcs.faults().failNext(1, 429, Operation.PATCH);
            Thread.currentThread().interrupt();
            try {
                r.renew(lease, Duration.ofSeconds(20));
                outcomes.add("returned");
            } catch (RuntimeException e) {
                outcomes.add(e.getClass().getSimpleName() + ": " + e.getMessage());
            } finally {
                outcomes.add("flag " + Thread.interrupted());
            }
        }
        System.out.println("[review] interrupted renewals: " + outcomes);
        assertThat(lease.isHealthy()).as("a lease renewed three times on an interrupted thread, GCS healthy but for one 429 "
                + "each; renewals: %s; lease: %s", outcomes, lease).isTrue();
        lease.release();
    }

    /**
     * Interleaving: renew racing the scheduled refresh. The scheduled refresh of an 8 s lease commits but its reply
     * comes after the timeout; renew(lease, 2 s) meets 412, adopts it and writes once more (e6a3176) — and that second
     * write commits with its reply late too, so renew throws. The object says 2 s. The holder is then cut off (HANG).
     * Safety: its lease must be unhealthy before another process takes the lock over (~2 s after the write).
     */
    @Test
    void aRenewalWhoseSecondWriteCommitsLateThenACrashNeverLeavesTwoHealthyLeases() throws Exception {
        CountDownLatch refreshFailed = new CountDownLatch(1);
        GcsLockRegistry r = through("h", Duration.ofSeconds(8), Duration.ofSeconds(1), Duration.ofMillis(300),
                new LockEventListener() {
                    @Override
                    public void refreshFailed(Lease lease, Exception error) {
                        refreshFailed.countDown();
                    }
                });
        Lease lease = r.tryAcquire("renew-late-twice").orElseThrow();
        gcs.faults().client("h").slowReplies(1, Duration.ofMillis(1500)); // the scheduled refresh
        assertThat(refreshFailed.await(10, TimeUnit.SECONDS)).isTrue();
        gcs.faults().beforeNext(Operation.PATCH, () -> { }); // renew's first PATCH: 412
        gcs.faults().beforeNext(Operation.PATCH, () -> gcs.faults().client("h").slowReplies(1, Duration.ofMillis(1500)));
        Object outcome;
        try {
            r.renew(lease, Duration.ofSeconds(2));
            outcome = "returned";
        } catch (RuntimeException e) {
            outcome = e.getMessage();
        }
        long ttlInObject = storedTtlMillis("renew-late-twice");
        gcs.faults().client("h").partition(ClientFaults.Partition.HANG);
        long cut = System.nanoTime();

        GcsLockRegistry other = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(250)));
        AtomicReference<Boolean> holderHealthyAtTakeover = new AtomicReference<>();
        AtomicReference<Lease> taken = new AtomicReference<>();
        await("another registry to take the lock over after the holder was cut off")
                .atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> {
            Optional<Lease> l = other.tryAcquire("renew-late-twice");
            if (l.isPresent()) {
                holderHealthyAtTakeover.set(lease.isHealthy());
                taken.set(l.get());
            }
            return l.isPresent();
        });
        System.out.println("[review] renew outcome: " + outcome + "; ttl in object " + ttlInObject + "; takeover "
                + (System.nanoTime() - cut) / 1_000_000 + " ms after the cut; holder healthy then: " + holderHealthyAtTakeover.get());
        assertThat(holderHealthyAtTakeover.get()).as("the cut-off holder's lease at the takeover (renew: %s, ttl %s)",
                outcome, ttlInObject).isFalse();
        taken.get().release();
    }
}
