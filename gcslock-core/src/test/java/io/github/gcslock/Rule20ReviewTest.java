package io.github.gcslock;

import com.google.cloud.storage.BlobId;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static io.github.gcslock.TestThreads.awaitUninterruptibly;
import static io.github.gcslock.TestThreads.nap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Independent review (review2) of rule 20 as changed in de1e02b: reservations a listener thread takes over, nested
 * events queued, no listener under a lease's I/O lock. Through the public API against the in-JVM emulator.
 */
class Rule20ReviewTest extends EmulatorTestBase {

    private static boolean engineThread(String name) {
        return !name.startsWith("gcslock-events") && name.startsWith("gcslock");
    }

    /** Records a listener's events of one lock, with thread names. */
    static class Recorder implements LockEventListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();

        void add(String e) {
            events.add(e);
            threads.add(Thread.currentThread().getName());
        }

        @Override public void acquired(Lease lease) { add("acquired"); }
        @Override public void refreshed(Lease lease) { add("refreshed"); }
        @Override public void lost(Lease lease, LockLostException reason) { add("lost"); }
        @Override public void released(Lease lease) { add("released"); }
    }

    /**
     * Interleaving 1: A blocks in "acquired" on the acquiring thread (it registered an onLost first); the lease is lost
     * meanwhile (object deleted). B and the onLost must be told promptly, each event exactly once, acquired before lost,
     * never on an engine thread; A is told "lost" once after it returns.
     */
    @Test
    void blockedAcquiredDelaysNeitherOtherListenersNorOnLost_exactlyOnceInOrder() throws Exception {
        CountDownLatch aIn = new CountDownLatch(1);
        CountDownLatch letA = new CountDownLatch(1);
        List<String> onLost = new CopyOnWriteArrayList<>();
        Recorder a = new Recorder() {
            @Override
            public void acquired(Lease lease) {
                add("acquired");
                lease.onLost((l, e) -> onLost.add(Thread.currentThread().getName()));
                aIn.countDown();
                awaitUninterruptibly(letA, 60);
            }
        };
        Recorder b = new Recorder();
        GcsLockRegistry r = registry(x -> x.listener(a).listener(b));
        try {
            CompletableFuture<Lease> call = CompletableFuture.supplyAsync(() -> r.tryAcquire("p1").orElseThrow());
            assertThat(aIn.await(30, TimeUnit.SECONDS)).isTrue();
            storage.delete(BlobId.of(BUCKET, "gcslock/p1"));
            await("B told of the loss while A blocks").atMost(Duration.ofSeconds(30)).until(() -> b.events.contains("lost"));
            await("onLost told while A blocks").atMost(Duration.ofSeconds(30)).until(() -> !onLost.isEmpty());
            assertThat(b.events).containsExactly("acquired", "lost");
            letA.countDown();
            Lease lease = call.get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> a.events.contains("lost"));
            lease.release();
            await().atMost(Duration.ofSeconds(30)).until(() -> a.events.contains("released") && b.events.contains("released"));
            nap(500);
            assertThat(a.events).containsExactly("acquired", "lost", "released");
            assertThat(b.events).containsExactly("acquired", "lost", "released");
            assertThat(onLost).hasSize(1);
            assertThat(b.threads).noneMatch(Rule20ReviewTest::engineThread);
            assertThat(onLost).noneMatch(Rule20ReviewTest::engineThread);
        } finally {
            letA.countDown();
        }
    }

    /**
     * Interleaving 1b: after A's blocked "acquired" returns, A's queued "lost" goes to a listener thread while the
     * acquiring thread goes on to tell A "acquireFinished": two callbacks of the same listener about the same lock at
     * once (rule 20: "one at a time"), and acquireFinished after lost.
     * FAILS on de1e02b: {@code [one listener's callbacks of one lock, one at a time] Expecting ["acquired", "lost begins",
     * "acquireFinished DURING lost", "lost ends"] not to contain ["acquireFinished DURING lost"]}: acquireFinished is
     * called by Listeners.each() directly on the acquiring thread, outside the listener's channel, so it overlaps the
     * channel's "lost" that deliverHere() handed to a pool thread.
     * The interleaving: acquiring thread T tells C acquired, then A acquired (A blocks); the object is deleted and the
     * deadline declares the lease lost: C's lost goes to a listener thread, A's is queued in A's channel, owned by T;
     * A's acquired returns and T hands A's channel (its queued lost) to listener thread P; T tells C acquireFinished
     * (700 ms) and then A acquireFinished directly, while P runs A's lost (1500 ms). Fixed: acquireStarted and
     * acquireFinished are reservations in each listener's channel like acquired (Listeners#acquisitionEvent), so A's
     * acquireFinished is queued behind its lost and P runs it after lost returned.
     */
    @Test
    void aListenersAcquireFinishedNeverOverlapsItsOwnLost() throws Exception {
        CountDownLatch aIn = new CountDownLatch(1);
        CountDownLatch letA = new CountDownLatch(1);
        AtomicBoolean inLost = new AtomicBoolean();
        List<String> seen = new CopyOnWriteArrayList<>();
        LockEventListener a = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                seen.add("acquired");
                aIn.countDown();
                awaitUninterruptibly(letA, 60);
            }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                inLost.set(true);
                seen.add("lost begins");
                nap(1500);
                seen.add("lost ends");
                inLost.set(false);
            }

            @Override
            public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
                if ("p1b".equals(name)) {
                    seen.add(inLost.get() ? "acquireFinished DURING lost" : "acquireFinished");
                }
            }
        };
        LockEventListener c = new LockEventListener() {
            @Override
            public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
                nap(700); // a tracing listener told first: A's lost starts on a listener thread meanwhile
            }
        };
        GcsLockRegistry r = registry(x -> x.listener(c).listener(a));
        try {
            CompletableFuture<Lease> call = CompletableFuture.supplyAsync(() -> r.tryAcquire("p1b").orElseThrow());
            assertThat(aIn.await(30, TimeUnit.SECONDS)).isTrue();
            storage.delete(BlobId.of(BUCKET, "gcslock/p1b"));
            // the loss is declared while A blocks (its lost queued behind A's acquired)
            Lease[] leaseHolder = new Lease[1];
            await().atMost(Duration.ofSeconds(30)).until(() -> r.heldLeases().stream().noneMatch(Lease::isHealthy));
            letA.countDown();
            leaseHolder[0] = call.get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> seen.contains("lost ends") && seen.stream().anyMatch(s -> s.startsWith("acquireFinished")));
            assertThat(seen).as("one listener's callbacks of one lock, one at a time")
                    .doesNotContain("acquireFinished DURING lost");
        } finally {
            letA.countDown();
        }
    }

    /**
     * Interleaving 2/exactly once: the same listener object registered twice shares one channel (identity); its second
     * reservation queues behind the first, not begun, so a pool thread takes both over at once: "acquired" runs on a
     * listener thread, not on the acquiring thread before the call returns, and an Error there leaves the lease held.
     * FAILS on de1e02b: {@code [acquired runs on the acquiring thread (LockEventListener Javadoc)] Expecting ArrayList:
     * ["gcslock-events-1", "gcslock-events-1"] to contain only: ["main"]}: Channel equality is by listener identity, so
     * enqueue() of the second reservation finds the first not begun (queue size 2, not owned) and starts a pool drain.
     * The interleaving: T reserves acquired in channel (p2, twice) for registration 1, then in the same channel for
     * registration 2: the second entry behind a reservation not begun starts listener thread P, which takes both over
     * before T comes to them; T's deliverHere finds them taken and the call returns the lease, the Errors logged on P.
     * Fixed: a channel per registration (Listeners.Registration), so each reservation heads a channel of its own.
     */
    @Test
    void aListenerRegisteredTwiceIsToldAcquiredOnTheAcquiringThreadAndItsErrorFailsTheCall() throws Exception {
        List<String> threads = new CopyOnWriteArrayList<>();
        LockEventListener twice = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                threads.add(Thread.currentThread().getName());
                throw new AssertionError("listener broken");
            }
        };
        GcsLockRegistry r = registry(x -> x.listener(twice).listener(twice));
        String caller = Thread.currentThread().getName();
        Throwable thrown = null;
        Optional<Lease> got = Optional.empty();
        try {
            got = r.tryAcquire("p2");
        } catch (AssertionError e) {
            thrown = e;
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> threads.size() == 2);
        assertThat(threads).as("acquired runs on the acquiring thread (LockEventListener Javadoc)").containsOnly(caller);
        assertThat(thrown).as("an Error in acquired on the acquiring thread fails the call").isNotNull();
        assertThat(got).isEmpty();
        assertThat(object("p2")).as("a failed call leaves no lease held").isNull();
    }

    /** Interleaving 2: reserved entries taken over while the app thread is about to deliver them: exactly once each. */
    @Test
    void reservationsTakenOverRacingTheirOwnThreadAreDeliveredExactlyOnce() throws Exception {
        Recorder b = new Recorder();
        AtomicBoolean slow = new AtomicBoolean(true);
        LockEventListener a = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                if (slow.get()) {
                    nap(5); // hold the reservation of B not begun for a short while: the refresher's events race it
                }
            }

            @Override
            public void released(Lease lease) {
                nap(3);
            }
        };
        GcsLockRegistry r = registry(x -> x.listener(a).listener(b).refreshInterval(Duration.ofMillis(20)));
        int rounds = 40;
        for (int i = 0; i < rounds; i++) {
            Lease l = r.tryAcquire("p2b").orElseThrow();
            if (i % 3 == 0) {
                nap(30);
            }
            l.release();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> b.events.stream().filter("released"::equals).count() == rounds);
        nap(300);
        // each lease: acquired, refreshed*, released
        List<List<String>> per = new ArrayList<>();
        List<String> cur = null;
        for (String e : b.events) {
            if (e.equals("acquired")) {
                cur = new ArrayList<>();
                per.add(cur);
            }
            assertThat(cur).as("an event before acquired: " + b.events).isNotNull();
            cur.add(e);
        }
        assertThat(per).hasSize(rounds);
        for (List<String> lease : per) {
            assertThat(lease.get(lease.size() - 1)).as(lease.toString()).isEqualTo("released");
            assertThat(lease.subList(1, lease.size() - 1)).as(lease.toString()).allMatch("refreshed"::equals);
        }
        assertThat(b.threads).noneMatch(Rule20ReviewTest::engineThread);
    }

    /**
     * Nested: release() inside acquired; another lock acquired inside released.
     * Triage (issue 29) of the failure seen once at load average ~12, {@code [acquired, released, acquired, lost,
     * released]}: a test bug, not the engine's. The lease of n2 (acquired inside released of n1, on a listener thread)
     * is an ordinary lease, refreshed by the refresher like any other; what the test asserted was that a lease with
     * the base class's 1 s TTL (deadline about 2/3 s after its last confirmed refresh was sent, 500 ms call bound) is
     * never lost between its acquisition and the main thread's release after an Awaitility poll — which a machine at
     * load 12 need not keep (rule 11 declares a lease lost when its refreshes are not confirmed in time: that is the
     * engine being safe). The run of the time recorded no reason. Run since: 25 repetitions green at load ~6 (with
     * the reason of any loss printed: none). Now with a 20 s TTL, so that only a defect can lose the lease here, and
     * the reason of a loss in the message.
     */
    @Test
    void nestedReleaseInsideAcquiredAndAcquireInsideReleased() throws Exception {
        List<String> lostReasons = new CopyOnWriteArrayList<>();
        Recorder b = new Recorder() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                lostReasons.add(reason.getMessage());
                super.lost(lease, reason);
            }
        };
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Lease> other = new AtomicReference<>();
        LockEventListener a = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                if (lease.name().equals("n1")) {
                    lease.release();
                }
            }

            @Override
            public void released(Lease lease) {
                if (lease.name().equals("n1")) {
                    other.set(reg.get().tryAcquire("n2").orElseThrow());
                }
            }
        };
        reg.set(registry(x -> x.listener(a).listener(b).ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2))));
        Lease l = reg.get().tryAcquire("n1").orElseThrow();
        assertThat(l.isHealthy()).isFalse();
        await().atMost(Duration.ofSeconds(30)).until(() -> other.get() != null);
        assertThat(object("n1")).isNull();
        assertThat(object("n2")).isNotNull();
        other.get().release();
        await().atMost(Duration.ofSeconds(30)).until(() -> b.events.stream().filter("released"::equals).count() == 2);
        nap(300);
        assertThat(b.events.stream().filter(e -> !e.equals("refreshed"))).as("lost: " + lostReasons)
                .containsExactly("acquired", "released", "acquired", "released");
    }

    /**
     * Nested: the same lock acquired again in onLost; close() inside lost returns.
     * Triage (issue 29): the expectation is rule 20's (B hears acquired, lost, released of lease 1, then acquired of
     * lease 2, which onLost acquired: queued behind them) and the engine met it, 25 repetitions at load ~6. But it
     * depended on a race the engine lost only under preemption: the thread declaring the loss handed the onLost
     * listeners to a listener thread before it queued B's lost, so onLost's release could queue B's released first
     * ([acquired, released, lost, ...]). Made deterministic and fixed in
     * {@link #aReleaseByAnOnLostListenerComesAfterEveryListenersLost}.
     */
    @Test
    void reacquireInsideOnLostAndCloseInsideLost() throws Exception {
        Recorder b = new Recorder();
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicReference<Object> again = new AtomicReference<>();
        CountDownLatch closed = new CountDownLatch(1);
        LockEventListener closer = new LockEventListener() {
            @Override
            public void lost(Lease lease, LockLostException reason) {
                if (lease.name().equals("o2")) {
                    reg.get().close();
                    closed.countDown();
                }
            }
        };
        reg.set(registry(x -> x.listener(b).listener(closer)));
        Lease l = reg.get().tryAcquire("o1").orElseThrow();
        l.onLost((x, e) -> {
            try {
                x.release(); // a lost lease keeps its name here until released
                again.set(reg.get().tryAcquire("o1").map(Object.class::cast).orElse("empty"));
            } catch (RuntimeException ex) {
                again.set(ex);
            }
        });
        storage.delete(BlobId.of(BUCKET, "gcslock/o1"));
        await().atMost(Duration.ofSeconds(30)).until(() -> again.get() != null);
        assertThat(again.get()).isInstanceOf(Lease.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> b.events.size() >= 4);
        assertThat(b.events).startsWith("acquired", "lost", "released", "acquired");
        ((Lease) again.get()).release();
        Lease o2 = reg.get().tryAcquire("o2").orElseThrow();
        storage.delete(BlobId.of(BUCKET, "gcslock/o2"));
        assertThat(closed.await(30, TimeUnit.SECONDS)).as("close() inside lost returns").isTrue();
        assertThat(o2.isHealthy()).isFalse();
    }

    /**
     * Lost vs. a release made by the lease's own onLost listener (triage of
     * {@link #reacquireInsideOnLostAndCloseInsideLost}): every registry listener hears lost before that release's
     * released. The interleaving, made deterministic here by a runtime that never refreshes (so the deadline timer
     * declares the loss, holding no I/O lock of the lease: a loss a refresh declares is declared under it, and a release
     * waits for that lock) and whose listener threads hold up the thread that declares the loss right after it handed the
     * lease's onLost listeners over (as a loaded machine may deschedule it): the thread declaring the loss set the lease LOST, handed its onLost listeners to a listener thread, and only then
     * queued the registry listeners' lost; the onLost listener released the lease meanwhile, so B's released was queued
     * (and told) before B's lost. Fixed: the loss is queued for every listener in the same step as the transition, under
     * the lease's monitor, which a release takes to begin and to end (GcsLease#markLost, #released).
     * FAILS on 9dff2fc: {@code [B's events] Expecting actual: ["acquired", "released", "lost"] to contain exactly (and in
     * same order): ["acquired", "lost", "released"]}.
     */
    @Test
    void aReleaseByAnOnLostListenerComesAfterEveryListenersLost() throws Exception {
        AtomicReference<Thread> onLostThread = new AtomicReference<>();
        CountDownLatch releaseReturned = new CountDownLatch(1);
        AtomicBoolean stalled = new AtomicBoolean();
        EngineRuntime real = EngineRuntime.REAL;
        EngineRuntime stallAfterTheFirstHandOverOfALoss = new EngineRuntime() {
            @Override
            public ScheduledExecutorService timer(ThreadFactory threads) {
                if (!threads.newThread(() -> { }).getName().startsWith("gcslock-refresh-timer")) {
                    return real.timer(threads); // the deadline timer
                }
                // no refresh ever comes: the lease is lost at its deadline, declared by the deadline timer, which holds
                // no I/O lock of the lease (a loss a refresh declares is declared under it, and a release waits for it)
                ScheduledThreadPoolExecutor never = new ScheduledThreadPoolExecutor(1, threads) {
                    @Override
                    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
                        return super.schedule(command, 1, TimeUnit.HOURS);
                    }
                };
                never.setRemoveOnCancelPolicy(true);
                return never;
            }
            @Override public ExecutorService refreshThreads(int max, Duration keepAlive, ThreadFactory threads) {
                return real.refreshThreads(max, keepAlive, threads);
            }
            @Override public boolean await(CountDownLatch latch, long nanos) throws InterruptedException { return real.await(latch, nanos); }
            @Override public boolean tryAcquire(Semaphore permit, long nanos) throws InterruptedException { return real.tryAcquire(permit, nanos); }
            @Override public void sleep(long nanos) throws InterruptedException { real.sleep(nanos); }
            @Override public long nanoTime() { return real.nanoTime(); }
            @Override public java.util.random.RandomGenerator random() { return real.random(); }
            @Override public String randomId(int bytes) { return real.randomId(bytes); }

            @Override
            public ExecutorService eventThreads(ThreadFactory threads) {
                return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), threads) {
                    @Override
                    public void execute(Runnable command) {
                        super.execute(command);
                        boolean declaringALoss = StackWalker.getInstance().walk(f -> f.anyMatch(x -> x.getMethodName().equals("markLost")));
                        if (declaringALoss && stalled.compareAndSet(false, true)) {
                            // the first hand-over of a loss is the lease's onLost listeners: this thread stalls here until
                            // their release returned, or until that release waits for this thread (the fix)
                            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                            while (releaseReturned.getCount() > 0 && System.nanoTime() - end < 0) {
                                Thread t = onLostThread.get();
                                if (t != null && t.getState() == Thread.State.BLOCKED) {
                                    break;
                                }
                                nap(2);
                            }
                        }
                    }
                };
            }
        };
        Recorder b = new Recorder();
        GcsLockRegistry r = registry(x -> x.listener(b).runtime(stallAfterTheFirstHandOverOfALoss));
        Lease l = r.tryAcquire("lo1").orElseThrow();
        l.onLost((x, e) -> {
            onLostThread.set(Thread.currentThread());
            x.release();
            releaseReturned.countDown();
        });
        assertThat(releaseReturned.await(30, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(30)).until(() -> b.events.size() >= 3);
        nap(200);
        assertThat(stalled).as("the loss was declared through the stalling pool").isTrue();
        assertThat(b.events.stream().filter(e -> !e.equals("refreshed"))).as("B's events").containsExactly("acquired", "lost", "released");
    }

    /**
     * Request events vs. the lease's own events: for one listener and lock, a request event never comes after
     * "released" (before the next acquisition starts), and the lease's events come between acquired and released.
     * The interleaving (seen at load on the old main): the renewing thread R holds the lease's I/O lock, its
     * requestAnswered reserved but held back until R lets the lock go; main's release() reserves released behind it,
     * so listener thread P takes both over; main's next tryAcquire told acquireStarted at once on its own thread,
     * outside the channel, before P delivered released: [start, released, answered, acquired]. Timing-dependent: the
     * deterministic reproducer is {@link #theNextCallsAcquireStartedComesAfterThePreviousLeasesLostAndReleased}.
     */
    @Test
    void requestEventsNeverFollowTheReleasedOfTheirLease() throws Exception {
        List<String> ev = new CopyOnWriteArrayList<>();
        LockEventListener l = new LockEventListener() {
            @Override public void acquireStarted(String name, AcquireMode mode) { ev.add("start"); }
            @Override public void acquired(Lease lease) { ev.add("acquired"); }
            @Override public void refreshed(Lease lease) { ev.add("refreshed"); }
            @Override public void released(Lease lease) { ev.add("released"); nap(2); }
            @Override public void requestAnswered(String name) { if ("q".equals(name)) { ev.add("answered"); nap(1); } }
            @Override public void requestFailed(String name, GcsLockException error) { if ("q".equals(name)) ev.add("failed"); }
        };
        GcsLockRegistry r = registry(x -> x.listener(l).refreshInterval(Duration.ofMillis(20)));
        int rounds = 20;
        for (int i = 0; i < rounds; i++) {
            Lease lease = r.tryAcquire("q").orElseThrow();
            CompletableFuture<Void> renewing = CompletableFuture.runAsync(() -> r.renew(lease, TTL));
            nap(10);
            lease.release();
            try {
                renewing.get(30, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // a renewal racing a release may fail
            }
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> ev.stream().filter("released"::equals).count() == rounds);
        nap(500);
        for (int i = 0; i < ev.size(); i++) {
            if (ev.get(i).equals("released") && i + 1 < ev.size()) {
                assertThat(ev.get(i + 1)).as("after released at " + i + ": " + ev).isEqualTo("start");
            }
        }
    }

    /**
     * acquireStarted of the next call vs. a previous lease's events still pending: A blocks in lost of lease 1 (a
     * listener thread); main releases lease 1 (released queued behind lost) and calls tryAcquire again. A must hear
     * start, acquired and finished of call 2 only after lost and released of lease 1, one at a time; the call returns
     * at once all the same (an acquiring thread never waits for listeners).
     * FAILS on the old main (ff6f0dd): {@code [A's events of the lock, in order] Expecting actual: ["start", "acquired",
     * "finished", "lost begins", "start during lost", "finished during lost", "lost ends", "released", "acquired"] to
     * contain exactly (and in same order) ...}: acquireStarted and acquireFinished were told on the acquiring thread
     * outside A's channel, in the middle of its lost and before lease 1's released.
     */
    @Test
    void theNextCallsAcquireStartedComesAfterThePreviousLeasesLostAndReleased() throws Exception {
        CountDownLatch inLost = new CountDownLatch(1);
        CountDownLatch letLost = new CountDownLatch(1);
        AtomicBoolean losing = new AtomicBoolean();
        List<String> seen = new CopyOnWriteArrayList<>();
        LockEventListener a = new LockEventListener() {
            private void add(String e) {
                seen.add(losing.get() ? e + " during lost" : e);
            }

            @Override public void acquireStarted(String name, AcquireMode mode) { add("start"); }
            @Override public void acquired(Lease lease) { add("acquired"); }
            @Override public void released(Lease lease) { add("released"); }
            @Override public void acquireFinished(String name, AcquireOutcome outcome, Duration took) { add("finished"); }

            @Override
            public void lost(Lease lease, LockLostException reason) {
                seen.add("lost begins");
                losing.set(true);
                inLost.countDown();
                awaitUninterruptibly(letLost, 60);
                losing.set(false);
                seen.add("lost ends");
            }
        };
        GcsLockRegistry r = registry(x -> x.listener(a));
        try {
            Lease first = r.tryAcquire("s1").orElseThrow();
            storage.delete(BlobId.of(BUCKET, "gcslock/s1"));
            assertThat(inLost.await(30, TimeUnit.SECONDS)).isTrue();
            first.release();
            Lease second = r.tryAcquire("s1").orElseThrow(); // returns at once: A's events of it are queued
            letLost.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> seen.size() >= 9);
            nap(200);
            assertThat(seen).as("A's events of the lock, in order").containsExactly(
                    "start", "acquired", "finished", "lost begins", "lost ends", "released", "start", "acquired", "finished");
            second.release();
        } finally {
            letLost.countDown();
        }
    }

    /** Throws: Error in acquired on the app thread fails the call and leaves nothing held; channel not stuck after. */
    @Test
    void errorsInEachCallbackNeitherLeaveALeaseHeldNorStickAChannel() throws Exception {
        Recorder b = new Recorder();
        AtomicBoolean throwAcquired = new AtomicBoolean(true);
        LockEventListener bad = new LockEventListener() {
            @Override public void acquired(Lease lease) { if (throwAcquired.get()) throw new AssertionError("acq"); }
            @Override public void released(Lease lease) { throw new AssertionError("rel"); }
            @Override public void lost(Lease lease, LockLostException reason) { throw new OutOfMemoryError("lost"); }
            @Override public void refreshed(Lease lease) { throw new IllegalStateException("ref"); }
            @Override public void requestAnswered(String name) { throw new AssertionError("req"); }
        };
        GcsLockRegistry r = registry(x -> x.listener(bad).listener(b));
        assertThatThrownBy(() -> r.tryAcquire("e1")).isInstanceOf(AssertionError.class);
        assertThat(object("e1")).isNull();
        throwAcquired.set(false);
        Lease l = r.tryAcquire("e1").orElseThrow();
        l.onLost((x, e) -> { throw new AssertionError("onLost"); });
        List<String> second = new CopyOnWriteArrayList<>();
        l.onLost((x, e) -> second.add("told"));
        storage.delete(BlobId.of(BUCKET, "gcslock/e1"));
        await().atMost(Duration.ofSeconds(30)).until(() -> !second.isEmpty());
        l.release(); // a released that throws an Error: release() returns
        Lease l2 = r.tryAcquire("e1").orElseThrow();
        l2.release();
        await().atMost(Duration.ofSeconds(30)).until(() -> b.events.stream().filter("released"::equals).count() == 3);
        assertThat(b.events).containsSubsequence("acquired", "released", "acquired", "lost", "released", "acquired", "released");
    }

    /** close() while a listener blocks in acquired on another thread: close returns, B is told released. */
    @Test
    void closeWithAListenerBlockedInAcquiredReturns() throws Exception {
        CountDownLatch aIn = new CountDownLatch(1);
        CountDownLatch letA = new CountDownLatch(1);
        Recorder b = new Recorder();
        LockEventListener a = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                aIn.countDown();
                awaitUninterruptibly(letA, 60);
            }
        };
        GcsLockRegistry r = registry(x -> x.listener(a).listener(b));
        try {
            CompletableFuture<Optional<Lease>> call = CompletableFuture.supplyAsync(() -> r.tryAcquire("c1"));
            assertThat(aIn.await(30, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(r::close);
            closing.get(30, TimeUnit.SECONDS);
            assertThat(object("c1")).isNull();
            await().atMost(Duration.ofSeconds(30)).until(() -> b.events.contains("released"));
            assertThat(b.events).containsExactly("acquired", "released");
            letA.countDown();
            call.get(30, TimeUnit.SECONDS);
        } finally {
            letA.countDown();
        }
    }

    /** Interrupt of the application thread while it delivers its own reserved events: no lease leaked either way. */
    @Test
    void interruptWhileDeliveringOwnReservedEvents() throws Exception {
        CountDownLatch aIn = new CountDownLatch(1);
        CountDownLatch letA = new CountDownLatch(1);
        Recorder b = new Recorder();
        LockEventListener a = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                aIn.countDown();
                awaitUninterruptibly(letA, 60); // keeps the interrupt flag
            }
        };
        GcsLockRegistry r = registry(x -> x.listener(a).listener(b));
        AtomicReference<Object> outcome = new AtomicReference<>();
        AtomicBoolean flag = new AtomicBoolean();
        Thread t = new Thread(() -> {
            try {
                outcome.set(r.tryAcquire("i1").orElse(null));
            } catch (Throwable e) {
                outcome.set(e);
            }
            flag.set(Thread.currentThread().isInterrupted());
        });
        t.start();
        try {
            assertThat(aIn.await(30, TimeUnit.SECONDS)).isTrue();
            t.interrupt();
            nap(200);
            letA.countDown();
            t.join(30_000);
            assertThat(t.isAlive()).isFalse();
            assertThat(flag.get()).as("the interrupt is kept").isTrue();
            if (outcome.get() instanceof Lease lease) {
                assertThat(object("i1")).isNotNull();
                assertThat(lease.isHealthy()).isTrue();
                lease.release();
            } else {
                assertThat(object("i1")).as("a failed call leaves no lease held: " + outcome.get()).isNull();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> b.events.contains("released"));
            assertThat(b.events.stream().filter(e -> !e.equals("refreshed"))).containsExactly("acquired", "released");
        } finally {
            letA.countDown();
        }
    }
}
