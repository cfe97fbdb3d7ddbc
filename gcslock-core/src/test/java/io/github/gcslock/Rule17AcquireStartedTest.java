package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Rule 17 against rule 20's first event: a listener that takes the lock inside {@code acquireStarted}, on the acquiring
 * thread, for the owner of the call that is starting. The reentrancy check ran only before {@code acquireStarted}, so
 * the call then asked for a name its own owner held: a wait sat out its whole budget ({@code Lock.lock()}: for ever), a
 * one-shot came back empty. Each test names the interleaving it tries; bounds are for liveness only.
 */
class Rule17AcquireStartedTest extends EmulatorTestBase {

    private static final Duration BUDGET = Duration.ofSeconds(4);

    /** Records the events of every lock: "start:MODE", "finished:OUTCOME", "acquired", "released" (in order). */
    static final class Events implements LockEventListener {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override public void acquireStarted(String name, AcquireMode mode) { events.add("start:" + mode); }
        @Override public void acquireFinished(String name, AcquireOutcome outcome, Duration took) { events.add("finished:" + outcome); }
        @Override public void acquired(Lease lease) { events.add("acquired"); }
        @Override public void released(Lease lease) { events.add("released"); }

        long count(String e) {
            return events.stream().filter(e::equals).count();
        }
    }

    /** A listener that runs {@code inside} once, in the first acquireStarted it is told. */
    static LockEventListener once(AtomicReference<GcsLockRegistry> reg, Function<GcsLockRegistry, Lease> inside,
                                  AtomicReference<Lease> taken) {
        AtomicBoolean armed = new AtomicBoolean(true);
        return new LockEventListener() {
            @Override
            public void acquireStarted(String name, AcquireMode mode) {
                if (armed.compareAndSet(true, false)) {
                    taken.set(inside.apply(reg.get()));
                }
            }
        };
    }

    private static <T> T onOtherThread(java.util.concurrent.Callable<T> call) throws Exception {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return call.call();
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }).get(60, TimeUnit.SECONDS);
    }

    /**
     * A wait (thread owner) whose listener took the name in acquireStarted with tryAcquire on the same thread: the wait
     * is a reentrant hold of that lease at once (no budget sat out, no request of its own), told acquireFinished
     * ACQUIRED after its acquireStarted (every announced call is finished, rule 20) and no second "acquired"; GCS is
     * released with the last of the two holds.
     */
    @Test
    void aWaitWhoseListenerTookTheLockForItsOwnerIsAReentrantHoldOfThatLease() throws Exception {
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Lease> inner = new AtomicReference<>();
        Events events = new Events();
        reg.set(registry(b -> b.listener(once(reg, r -> r.tryAcquire("job").orElse(null), inner)).listener(events)));
        long t0 = System.nanoTime();
        Lease outer = onOtherThread(() -> reg.get().acquire("job", BUDGET));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(inner.get()).as("the listener's call got the lease").isNotNull();
        assertThat(took).as("the wait did not sit out its budget for its own owner's hold").isLessThan(BUDGET);
        assertThat(outer.leaseId()).isEqualTo(inner.get().leaseId());
        assertThat(gcs.faults().requestCount(Operation.INSERT)).as("one create: the listener's").isEqualTo(1);
        await().atMost(Duration.ofSeconds(30)).until(() -> events.count("finished:ACQUIRED") == 2);
        assertThat(events.count("start:WAIT")).isEqualTo(1);
        assertThat(events.count("start:TRY")).isEqualTo(1);
        assertThat(events.count("acquired")).as("one lease acquired").isEqualTo(1);
        outer.release();
        assertThat(inner.get().isHealthy()).as("the listener's hold outlives the nested one").isTrue();
        assertThat(object("job")).isNotNull();
        inner.get().release();
        assertThat(object("job")).isNull();
        await().atMost(Duration.ofSeconds(30)).until(() -> events.count("released") == 1);
    }

    /** The same with a one-shot: it found its own owner's hold and came back empty (BUSY); now it is a reentrant hold. */
    @Test
    void aOneShotWhoseListenerTookTheLockForItsOwnerIsAReentrantHoldOfThatLease() throws Exception {
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Lease> inner = new AtomicReference<>();
        Events events = new Events();
        reg.set(registry(b -> b.listener(once(reg, r -> r.tryAcquire("job").orElse(null), inner)).listener(events)));
        Optional<Lease> outer = onOtherThread(() -> reg.get().tryAcquire("job"));
        assertThat(inner.get()).isNotNull();
        assertThat(outer).as("a one-shot of the owner holding the name").isPresent();
        assertThat(outer.get().leaseId()).isEqualTo(inner.get().leaseId());
        await().atMost(Duration.ofSeconds(30)).until(() -> events.count("finished:ACQUIRED") == 2);
        assertThat(events.count("start:TRY")).isEqualTo(2);
        inner.get().release();
        assertThat(object("job")).as("the nested hold keeps it").isNotNull();
        outer.get().release();
        assertThat(object("job")).isNull();
    }

    /**
     * An invocation's wait whose listener took the name for the THREAD in acquireStarted: the thread cannot give its
     * hold back while it waits, so the wait is refused at once (rule 17, as when the thread held it before the call),
     * told acquireFinished ERROR; the thread's hold is untouched.
     */
    @Test
    void anInvocationsWaitWhoseListenerTookTheLockForItsThreadIsRefusedAtOnce() throws Exception {
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Lease> inner = new AtomicReference<>();
        Events events = new Events();
        reg.set(registry(b -> b.listener(once(reg, r -> r.tryAcquire("job").orElse(null), inner)).listener(events)));
        LockOwner invocation = LockOwner.newInvocation("job-run");
        long t0 = System.nanoTime();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        onOtherThread(() -> {
            try {
                return reg.get().acquire("job", BUDGET, null, invocation);
            } catch (Throwable e) {
                thrown.set(e);
                return null;
            }
        });
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(thrown.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("'job'")
                .hasMessageContaining("held by this thread");
        assertThat(took).isLessThan(BUDGET);
        await().atMost(Duration.ofSeconds(30)).until(() -> events.count("finished:ERROR") == 1);
        assertThat(inner.get().isHealthy()).isTrue();
        inner.get().release();
        assertThat(object("job")).isNull();
    }

    /**
     * Same thread coming back: the listener takes the name and gives it back inside acquireStarted. Nothing is held
     * when the call goes on, so it acquires a lease of its own, as any call would.
     */
    @Test
    void aListenerThatTakesAndGivesBackTheLockInAcquireStartedLeavesANormalAcquisition() throws Exception {
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Lease> inner = new AtomicReference<>();
        Events events = new Events();
        reg.set(registry(b -> b.listener(once(reg, r -> {
            Lease l = r.tryAcquire("job").orElseThrow();
            l.release();
            return l;
        }, inner)).listener(events)));
        Lease outer = onOtherThread(() -> reg.get().acquire("job", BUDGET));
        assertThat(outer.leaseId()).isNotEqualTo(inner.get().leaseId());
        assertThat(outer.isHealthy()).isTrue();
        outer.release();
        assertThat(object("job")).isNull();
        await().atMost(Duration.ofSeconds(30)).until(() -> events.count("released") == 2);
        assertThat(events.count("acquired")).isEqualTo(2);
    }

    /**
     * Lost reply: the listener's create commits and its reply is lost. Whatever the listener's call ends with (it
     * adopts its own object, or deletes it and comes back empty), the outer wait ends within its budget holding the
     * name, and nothing is left once every hold is released.
     */
    @Test
    void aListenerWhoseCreateReplyIsLostInAcquireStartedLeavesTheWaitBoundedAndNothingBehind() throws Exception {
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Lease> inner = new AtomicReference<>();
        reg.set(registry(b -> b.listener(once(reg, r -> {
            gcs.faults().dropNextReply(Operation.INSERT);
            return r.tryAcquire("job").orElse(null);
        }, inner))));
        long t0 = System.nanoTime();
        Lease outer = onOtherThread(() -> reg.get().acquire("job", BUDGET));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(BUDGET);
        assertThat(outer.isHealthy()).isTrue();
        if (inner.get() != null) {
            assertThat(outer.leaseId()).isEqualTo(inner.get().leaseId());
            inner.get().release();
        }
        outer.release();
        assertThat(object("job")).isNull();
    }

    /**
     * An Error a listener throws in acquireFinished of the nested call fails that call, which gives back the hold it
     * would have returned: its own, not the lease the listener holds (that call succeeded).
     */
    @Test
    void anErrorInAcquireFinishedOfTheNestedCallGivesBackItsHoldOnly() throws Exception {
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Lease> inner = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
        LockEventListener failsTheOuterCall = new LockEventListener() {
            @Override
            public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
                if (finished.incrementAndGet() == 2) { // the nested call's; the listener's own call finished first
                    throw new AssertionError("the application's listener fails");
                }
            }
        };
        reg.set(registry(b -> b.listener(once(reg, r -> r.tryAcquire("job").orElse(null), inner)).listener(failsTheOuterCall)));
        assertThatThrownBy(() -> onOtherThread(() -> reg.get().acquire("job", BUDGET)))
                .hasRootCauseInstanceOf(AssertionError.class);
        assertThat(inner.get()).isNotNull();
        assertThat(inner.get().isHealthy()).as("the listener's lease stays held").isTrue();
        assertThat(object("job")).isNotNull();
        inner.get().release();
        assertThat(object("job")).as("one hold: released with the listener's").isNull();
    }
}
