package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rules 3, 4, 11 and 12 with interrupts: the clean-ups of objects of ours that no lease holds (the late object of rule 11
 * at hand-out, the create of unknown outcome of rule 3, the leaked object of rule 4, the release of rule 12) are sent
 * whatever the interrupt flag says, sent again after an interrupt broke them (at most 5 times per clean-up), never
 * delete another process's object, stay bounded, and give the interrupt back. Written by an independent review of
 * {@link CallsThroughInterrupts} (issue 29), through the public API against the emulator.
 */
class InterruptedCleanUpTest extends EmulatorTestBase {

    /** What a call on its own thread did. */
    static final class Outcome {
        volatile Object result;
        volatile Throwable failure;
        volatile boolean flagAtEnd;
        volatile long millis;

        @Override
        public String toString() {
            return "result=" + result + " failure=" + failure + (failure != null && failure.getCause() != null
                    ? " cause=" + failure.getCause() : "") + " flag=" + flagAtEnd + " ms=" + millis;
        }
    }

    interface Call {
        Object run() throws Exception;
    }

    private static Outcome runOn(Thread[] holder, Call call, long joinMs) throws InterruptedException {
        Outcome o = new Outcome();
        Thread t = new Thread(() -> {
            long t0 = System.nanoTime();
            try {
                o.result = call.run();
            } catch (Throwable e) {
                o.failure = e;
            }
            o.flagAtEnd = Thread.interrupted();
            o.millis = (System.nanoTime() - t0) / 1_000_000;
        }, "caller");
        holder[0] = t;
        t.start();
        t.join(joinMs);
        assertThat(t.isAlive()).as("the call is bounded (still running after %d ms)", joinMs).isFalse();
        return o;
    }

    private static boolean told(Outcome o) {
        return o.flagAtEnd || o.failure instanceof InterruptedException
                || (o.failure != null && o.failure.getCause() instanceof InterruptedException);
    }

    private long okDeletes() {
        return gcs.faults().successfulRequestCounts().getOrDefault(Operation.DELETE, 0L);
    }

    /**
     * N1: a one-shot tryAcquire whose create reply is late (rule 11 at hand-out), interrupted during the create, and
     * the late object's DELETE meets 503 k times, each time with a fresh interrupt while it is in flight (so the
     * client's backoff breaks). k <= 5: resent and deleted. k = 6: given up (bound), the call must still end, tell
     * the interrupt, and leave nothing after release + close.
     */
    private void lateObjectDeleteInterrupted(int k) throws Exception {
        long[] shift = {0};
        GcsLockRegistry a = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));
        Thread[] caller = new Thread[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos();
            caller[0].interrupt();
        });
        for (int i = 0; i < k; i++) {
            gcs.faults().beforeNext(Operation.DELETE, () -> caller[0].interrupt());
        }
        gcs.faults().failNext(k, 503, Operation.DELETE);
        Outcome o = runOn(caller, () -> a.tryAcquire("late-k" + k).orElse(null), 20_000);
        long deletesDuringCall = okDeletes();
        Blob afterCall = object("late-k" + k);
        assertThat(told(o)).as("the interrupt is given back: %s", o).isTrue();
        if (k <= 5) {
            assertThat(deletesDuringCall).as("the late object's DELETE went through after %d broken sends", k).isEqualTo(1);
        }
        if (o.result instanceof Lease l) {
            assertThat(l.isHealthy()).as("only a healthy lease is handed out").isTrue();
            l.release();
        }
        a.close();
        assertThat(object("late-k" + k)).as("nothing of ours after release and close()").isNull();
    }

    @Test
    void n1LateObjectDeleteBrokenFiveTimesIsStillSent() throws Exception {
        lateObjectDeleteInterrupted(5);
    }

    @Test
    void n1LateObjectDeleteBrokenSixTimesGivesUpBoundedAndLeavesNothingAfterClose() throws Exception {
        lateObjectDeleteInterrupted(6);
    }

    /**
     * N2: a waiting acquire's create commits with its reply lost; the waiter backs off and is interrupted; its
     * clean-up (read + guarded delete through the retrying client) meets 503s, each with a fresh interrupt in flight.
     * 2 + 2 broken sends (4 resends <= 5): the object must be deleted before the call returns (before: the read's
     * broken backoff ended the clean-up with a WARN and left the object).
     */
    private Outcome waiterCleanupInterrupted(String name, int readFailures, int deleteFailures) throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2))
                .operationTimeout(Duration.ofSeconds(5)).backoff(Duration.ofSeconds(5), Duration.ofSeconds(10), 2.0));
        gcs.faults().dropNextReply(Operation.INSERT);
        Thread[] waiter = new Thread[1];
        Outcome o = new Outcome();
        Thread t = new Thread(() -> {
            long t0 = System.nanoTime();
            try {
                o.result = r.acquire(name, Duration.ofSeconds(30));
            } catch (Throwable e) {
                o.failure = e;
            }
            o.flagAtEnd = Thread.interrupted();
            o.millis = (System.nanoTime() - t0) / 1_000_000;
        }, "waiter");
        waiter[0] = t;
        t.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> object(name) != null && backingOff(t));
        for (int i = 0; i < readFailures; i++) {
            gcs.faults().beforeNext(Operation.GET, () -> t.interrupt());
        }
        gcs.faults().failNext(readFailures, 503, Operation.GET);
        for (int i = 0; i < deleteFailures; i++) {
            gcs.faults().beforeNext(Operation.DELETE, () -> t.interrupt());
        }
        gcs.faults().failNext(deleteFailures, 503, Operation.DELETE);
        t.interrupt();
        t.join(30_000);
        assertThat(t.isAlive()).as("the waiter's call is bounded").isFalse();
        assertThat(o.failure).as("the interrupted waiter is told").isInstanceOf(InterruptedException.class);
        return o;
    }

    @Test
    void n2WaiterCleanupInterruptedFourTimesStillDeletesItsObject() throws Exception {
        waiterCleanupInterrupted("lost-int-4", 2, 2);
        assertThat(object("lost-int-4")).as("the waiter's own committed create, deleted by its clean-up").isNull();
    }

    /**
     * N3: the late object's DELETE commits with its reply dropped; an interrupt breaks the client's retry; before the
     * resend arrives another process creates its own object of the name. The resend is guarded: the other process's
     * object must survive, the call must not hand out a lease, and the interrupt is given back.
     */
    @Test
    void n3ResendAfterATakeoverNeverDeletesTheOtherProcessesObject() throws Exception {
        long[] shift = {0};
        GcsLockRegistry a = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));
        Thread[] caller = new Thread[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos();
            caller[0].interrupt();
        });
        gcs.faults().beforeNext(Operation.DELETE, () -> caller[0].interrupt()); // flag set while the DELETE is in flight
        gcs.faults().dropNextReply(Operation.DELETE); // it commits; the client retries after a backoff the flag breaks
        AtomicReference<Blob> foreign = new AtomicReference<>();
        gcs.faults().beforeNext(Operation.DELETE, () -> foreign.set(plantForeignLock("taken", Duration.ofSeconds(20))));
        Outcome o = runOn(caller, () -> a.tryAcquire("taken").orElse(null), 20_000);
        Blob now = object("taken");
        assertThat(foreign.get()).as("the other process created its object").isNotNull();
        assertThat(now).as("the other process's object").isNotNull();
        assertThat(now.getGeneration()).as("the other process's object is untouched").isEqualTo(foreign.get().getGeneration());
        assertThat(o.result).as("no lease while another process holds the name").isNull();
        assertThat(told(o)).as("the interrupt is given back: %s", o).isTrue();
    }

    /**
     * N4: close() racing the late object's clean-up: close() starts while the late DELETE is in flight (and meets 503
     * with a fresh interrupt). close() must return only once nothing of the call is left; the call ends "closed".
     */
    @Test
    void n4CloseRacingTheLateObjectsDeleteReturnsWithNothingLeft() throws Exception {
        long[] shift = {0};
        GcsLockRegistry a = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));
        Thread[] caller = new Thread[1];
        AtomicReference<Thread> closer = new AtomicReference<>();
        AtomicBoolean closeReturned = new AtomicBoolean();
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos();
            caller[0].interrupt();
        });
        gcs.faults().beforeNext(Operation.DELETE, () -> {
            Thread c = new Thread(() -> {
                a.close();
                closeReturned.set(true);
            }, "closer");
            closer.set(c);
            c.start();
            sleep(200); // close() is waiting for the create in flight
            caller[0].interrupt();
        });
        gcs.faults().failNext(1, 503, Operation.DELETE);
        Outcome o = runOn(caller, () -> a.tryAcquire("late-close").orElse(null), 20_000);
        closer.get().join(20_000);
        Blob left = object("late-close");
        assertThat(closeReturned.get()).isTrue();
        assertThat(left).as("nothing of ours once close() returned").isNull();
        assertThat(o.failure).as("the call ends as closed").isInstanceOf(IllegalStateException.class);
        assertThat(told(o)).as("the interrupt is given back: %s", o).isTrue();
    }

    /**
     * N5: a WAITING acquire whose create reply is late, interrupted during the create. After the late object's
     * delete (flag cleared, given back) the attempt goes on creating: does it hand out a lease to the interrupted
     * caller (flag set), end with InterruptedException, or swallow the interrupt? Nothing may be left after close().
     */
    @Test
    void n5WaitingAcquireInterruptedAroundALateCreate() throws Exception {
        long[] shift = {0};
        GcsLockRegistry a = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));
        Thread[] caller = new Thread[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos();
            caller[0].interrupt();
        });
        gcs.faults().failNext(1, 503, Operation.DELETE); // single try: no backoff, thrown at once
        Outcome o = runOn(caller, () -> a.acquire("late-wait", Duration.ofSeconds(5)), 20_000);
        assertThat(told(o)).as("the interrupted waiter is told: %s", o).isTrue();
        if (o.result instanceof Lease l) {
            assertThat(l.isHealthy()).isTrue();
            l.release();
        }
        a.close();
        assertThat(object("late-wait")).as("nothing of ours after close()").isNull();
    }


    /** Interrupts {@code target} every millisecond from {@link #start()} until it ends (a hostile canceller). */
    static final class Nemesis {
        final Thread target;
        volatile Thread t;
        final java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();

        Nemesis(Thread target) {
            this.target = target;
        }

        synchronized void start() {
            if (t != null) {
                return;
            }
            t = new Thread(() -> {
                while (target.isAlive()) {
                    target.interrupt();
                    sent.incrementAndGet();
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "nemesis");
            t.setDaemon(true);
            t.start();
        }
    }

    /**
     * N6: the late object's clean-up under a network that hangs (partition HANG right after the late create) and an
     * interrupt every millisecond: every send times out (bounded by the lease's call bound) and is resent after the
     * interrupt breaks the client's backoff. The call must stay bounded.
     */
    @Test
    void n6HangAndContinuousInterruptsStayBounded() throws Exception {
        long[] shift = {0};
        GcsLockRegistry a = registry(gcs.storage("a"), b -> b.ticker(() -> System.nanoTime() + shift[0]));
        Thread[] caller = new Thread[1];
        Nemesis[] nemesis = new Nemesis[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos();
            gcs.faults().client("a").partition(io.github.gcslock.test.ClientFaults.Partition.HANG);
            nemesis[0] = new Nemesis(caller[0]);
            nemesis[0].start();
        });
        Outcome o = runOn(caller, () -> a.tryAcquire("late-hang").orElse(null), 60_000);
        gcs.faults().client("a").heal();
        assertThat(o.millis).as("bounded: a handful of call bounds (333 ms each), not more").isLessThan(15_000);
        assertThat(told(o)).as("the interrupt is given back: %s", o).isTrue();
    }

    /**
     * N7 (the path the change left alone): a release fails in an outage (documented: the object stays "until this
     * process asks for the lock again"); the next tryAcquire, on an interrupted thread, finds it leaked (rule 4) and its
     * retaking DELETE meets 503 and the broken backoff. Is the leaked object left after close()?
     */
    @Test
    void n7LeakedRetakeInterrupted() throws Exception {
        GcsLockRegistry r = registry();
        Lease l1 = r.tryAcquire("leaked").orElseThrow();
        sleep(100);
        gcs.faults().failNext(200, 503, Operation.DELETE);
        l1.release(); // gives up: WARN, the object stays
        gcs.faults().reset();
        assertThat(object("leaked")).as("leaked by the failed release").isNotNull();
        Thread[] caller = new Thread[1];
        gcs.faults().beforeNext(Operation.DELETE, () -> caller[0].interrupt());
        gcs.faults().failNext(1, 503, Operation.DELETE);
        Outcome o = runOn(caller, () -> r.tryAcquire("leaked").orElse(null), 20_000);
        if (o.result instanceof Lease l) {
            l.release();
        }
        r.close();
        // Failed before the retake's DELETE went through CallsThroughInterrupts (the object stayed past close()).
        assertThat(object("leaked")).as("the leaked object, after the interrupted retake and close()").isNull();
    }


    /**
     * N8: a one-shot's create commits with its reply lost; the client's retry meets 503 and the caller is interrupted
     * meanwhile, so the client's backoff breaks. What does the call end with (code, cause, flag), and does its
     * clean-up (rule 3: read + delete of a create of unknown outcome) run, leaving nothing after close()?
     */
    @Test
    void n8OneShotCreateLostThenRetryBackoffInterrupted() throws Exception {
        GcsLockRegistry r = registry();
        Thread[] caller = new Thread[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> gcs.faults().beforeNext(Operation.INSERT, () -> {
            gcs.faults().failNext(1, 503, Operation.INSERT);
            caller[0].interrupt();
        }));
        gcs.faults().dropNextReply(Operation.INSERT);
        Outcome o = runOn(caller, () -> r.tryAcquire("lost-then-503").orElse(null), 20_000);
        if (o.result instanceof Lease l) {
            l.release();
        }
        r.close();
        assertThat(told(o)).as("the interrupt is given back: %s", o).isTrue();
        assertThat(object("lost-then-503")).as("the call's own committed create, after close()").isNull();
    }


    /**
     * N9: the late object's DELETE is broken 6 times (the bound: given up, the object stays, recorded as a create of
     * unknown outcome); the attempt's next create then meets 503 and the client's backoff breaks on the flag given
     * back. The call ends interrupted, and its end (rule 3) must delete the late object: nothing left, before close().
     */
    @Test
    void n9LateDeleteGivenUpThenTheCallEndsByTheInterruptAndItsEndDeletesTheObject() throws Exception {
        long[] shift = {0};
        GcsLockRegistry a = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));
        Thread[] caller = new Thread[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos();
            caller[0].interrupt();
        });
        for (int i = 0; i < 6; i++) {
            gcs.faults().beforeNext(Operation.DELETE, () -> caller[0].interrupt());
        }
        gcs.faults().failNext(6, 503, Operation.DELETE);
        gcs.faults().beforeNext(Operation.INSERT, () -> gcs.faults().failNext(1, 503, Operation.INSERT)); // the 2nd create
        Outcome o = runOn(caller, () -> a.tryAcquire("late-then-end").orElse(null), 20_000);
        Blob left = object("late-then-end");
        assertThat(told(o)).as("the interrupt is given back: %s", o).isTrue();
        if (o.result instanceof Lease l) {
            l.release();
        } else {
            assertThat(left).as("the call ended without a lease: nothing of it is left").isNull();
        }
    }

    /**
     * N14: as N1, for a WAITING acquire (single-try client: no backoff to break): each late DELETE meets 503 while an
     * interrupt arrives during it; CallsThroughInterrupts resends it since the flag is set (3 times), then it goes
     * through.
     */
    @Test
    void n14WaitingAcquireLateDeleteResentAfterInterruptsDuringSingleTries() throws Exception {
        long[] shift = {0};
        GcsLockRegistry a = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));
        Thread[] caller = new Thread[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            shift[0] += Duration.ofSeconds(2).toNanos();
            caller[0].interrupt();
        });
        for (int i = 0; i < 3; i++) {
            gcs.faults().beforeNext(Operation.DELETE, () -> caller[0].interrupt());
        }
        gcs.faults().failNext(3, 503, Operation.DELETE);
        Outcome o = runOn(caller, () -> a.acquire("late-wait-3", Duration.ofSeconds(5)), 20_000);
        long ok = okDeletes();
        assertThat(told(o)).as("the interrupt is given back: %s", o).isTrue();
        assertThat(ok).as("the late object's DELETE went through after 3 broken single tries").isEqualTo(1);
        if (o.result instanceof Lease l) {
            l.release();
        }
        a.close();
        assertThat(object("late-wait-3")).isNull();
    }

    private static boolean backingOff(Thread t) {
        return t.getState() == Thread.State.TIMED_WAITING
                && Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().equals(Acquirer.class.getName()));
    }
}
