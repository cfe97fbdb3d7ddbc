package io.github.gcslock;

import com.google.cloud.storage.StorageException;

import java.net.SocketTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A deterministic scheduler in virtual time for the engine's own threads (issue 29 part 2): the {@link EngineRuntime}
 * of every registry of one exploration, and the {@link InMemoryStorage.Gate} of their shared bucket.
 *
 * <p>Every thread of the exploration is controlled: the actors (callers of the public API) and one thread per task
 * of the engine's executors (refresh timer, refresh threads, deadline thread, event threads), made by the engine's own
 * thread factories so they carry its names. A controlled thread runs until it reaches a <em>yield point</em> — a GCS
 * request, a timed wait of the engine (wait loop, local permit, write-window sleep, a close waiting for releases), a
 * pause of a scenario — or ends, or blocks on one of the engine's locks. When every controlled thread is so
 * (quiescence), the explorer picks the next step with its seeded random: deliver a parked request (or, with faults,
 * lose its reply after it was applied, drop it, answer 503), end a wait, run a due task on a new thread, start an
 * actor, or move virtual time to the next due event. Time moves only then; no task due and no timed wait that came
 * due is left behind more than {@link #LATENESS} (the engine's threads are fast beside its timings; a thread asleep
 * past its time would be a process pause, which a scenario asks for explicitly) and no request outlives the operation
 * timeout (the client's bound, rule 15). Every step is printed to the trace; the same seed gives the same choices.
 *
 * <p>What is not controlled: the instants at which a thread released from one of the engine's locks runs between two
 * yield points (two such threads may run at once until their next yield point), and plain memory accesses. The
 * schedule is therefore replayable as far as the yield points decide it.
 */
final class VirtualWorld implements EngineRuntime, InMemoryStorage.Gate {

    /** How late a due task may run: time does not move further past it. */
    static final long LATENESS = Duration.ofMillis(50).toNanos();
    private static final Instant EPOCH = Instant.parse("2026-01-01T00:00:00Z");

    final long seed;
    private final Random random;
    private final boolean faults;
    private final long operationTimeout;
    private final List<String> trace = new ArrayList<>();
    private final Object lock = new Object();
    /** Virtual time, nanoseconds since {@link #EPOCH}. */
    private volatile long now = Duration.ofHours(1).toNanos();
    /**
     * Per controlled thread, its number in the order the explorer created it (from 1; 0: a thread of the test itself),
     * and how many yields and tasks it has made so far. A yield's or task's place among the options is (that number,
     * that count): decided by the seed, unlike a shared counter, which threads running at once (one just let go by
     * an engine lock beside the one the explorer woke) would draw from in whichever order the OS ran them — and the
     * same seed would pick another option (CI's seeds gave another schedule than the same seed on a workstation).
     */
    private final java.util.Map<Thread, long[]> threadOrder = new java.util.concurrent.ConcurrentHashMap<>();
    private int threadsCreated;
    /** Guarded by {@link #lock}. */
    private final List<Yield> parked = new ArrayList<>();
    private final List<Task> tasks = new ArrayList<>();
    private final List<Actor> actors = new ArrayList<>();
    private final Set<Thread> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** A request as its client sent it: its client (null: none), operation, object and virtual send time. */
    record Send(String client, String op, String object, long sentNanos) {
    }
    /** Every request of the engine's threads, in the order sent. */
    final List<Send> sends = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Per thread, the decision on each of its GCS requests ("create deliver", "get 503", ...), in order. */
    final java.util.Map<Thread, List<String>> decisions = new java.util.concurrent.ConcurrentHashMap<>();
    /** Per thread, the GCS requests it sent ("create", "get", ...) and its timed sleeps on a latch ("sleep"), in order. */
    final java.util.Map<Thread, List<String>> calls = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile boolean aborted;
    /**
     * Whether an interrupt may also break a request whose first try committed with its reply lost (the client's retry
     * backoff cut short after it: the outcome unknown to the engine, the write in the bucket), beside one that never
     * reached GCS. Off by default (the other scenarios' schedules stay as they were); a scenario turns it on.
     */
    volatile boolean interruptsMayCommit;
    /**
     * How many times each interrupt option of a request is offered (1 by default): a scenario whose interrupts are aimed
     * at requests makes them break the request more often than the faults' other outcomes do.
     */
    volatile int interruptWeight = 1;

    VirtualWorld(long seed, boolean faults, Duration operationTimeout) {
        this.seed = seed;
        this.random = new Random(seed);
        this.jitter = new Random(~seed);
        this.ids = new Random(seed * 31 + 17);
        this.faults = faults;
        this.operationTimeout = operationTimeout.toNanos();
    }

    /** Per client, the virtual instants [from, until) during which it is cut off from GCS. */
    private final java.util.Map<String, long[]> partitions = new java.util.concurrent.ConcurrentHashMap<>();

    /** Cuts {@code client} off from GCS from {@code from} (virtual time since the start) for {@code length}. */
    void partition(String client, Duration from, Duration length) {
        long start = Duration.ofHours(1).toNanos() + from.toNanos();
        partitions.put(client, new long[] {start, start + length.toNanos()});
        log(client + " will be cut off from GCS from " + from + " for " + length);
    }

    private boolean partitioned(String client) {
        long[] p = partitions.get(client);
        return p != null && now >= p[0] && now < p[1];
    }

    // ------------------------------------------------------------------ time

    Instant instant() {
        return EPOCH.plusNanos(now);
    }

    Clock clock() {
        return new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return VirtualWorld.this.instant();
            }
        };
    }

    List<String> trace() {
        synchronized (lock) {
            return new ArrayList<>(trace);
        }
    }

    /** A line of the scenario's own in the trace (its set-up: what each actor will do). */
    void note(String line) {
        log(line);
    }

    private void log(String line) {
        synchronized (lock) {
            trace.add(String.format("%8.3f s  %s", (now - Duration.ofHours(1).toNanos()) / 1e9, line));
        }
    }

    // ------------------------------------------------------------------ yield points

    /** A controlled thread waiting for the explorer's decision. */
    private abstract class Yield {
        final Thread thread = Thread.currentThread();
        final long seq;
        final String what;
        final Semaphore go = new Semaphore(0);
        volatile String decision;
        /** Set by the thread once it runs again after the decision: until then it is not settled. */
        volatile boolean resumed;

        Yield(String what) {
            this.seq = nextOrder();
            this.what = what;
        }

        /** The decisions open now (empty: not yet). */
        abstract List<String> options();

        /** When this yield can be decided by time alone (Long.MAX_VALUE: never). */
        long due() {
            return Long.MAX_VALUE;
        }

        /** A due that time must not pass without deciding this yield. */
        long bound() {
            return Long.MAX_VALUE;
        }

        String await() {
            if (aborted) {
                return "abort";
            }
            // The thread's interrupt flag is not what the options look at while it is parked: the semaphore clears it
            // when the park returns and sets it again only once the thread leaves, so an interrupt read from it would
            // be there or not depending on whether the OS had run the thread yet (another option list, another
            // schedule for the same seed). An interrupt pending when it parks, or sent while parked
            // (interrupt(Thread)), is kept in interruptsPending instead, and the flag is given back when it goes on.
            synchronized (lock) { // in one step with interrupt(Thread)'s look at the parked threads
                if (Thread.interrupted()) {
                    interruptsPending.add(thread);
                }
                parked.add(this);
            }
            go.acquireUninterruptibly();
            boolean interrupted = Thread.interrupted() | interruptsPending.remove(thread);
            if (interrupted) {
                thread.interrupt();
            }
            resumed = true;
            return decision;
        }

        /** Whether the thread has an interrupt pending (sent before it parked, or while it is parked). */
        boolean interruptPending() {
            return interruptsPending.contains(thread) || thread.isInterrupted();
        }

        @Override
        public String toString() {
            return thread.getName() + ": " + what;
        }
    }

    @Override
    public Object serve(InMemoryStorage.Request request, InMemoryStorage.Apply apply) throws StorageException {
        if (!threads.contains(Thread.currentThread())) {
            return apply.run(); // a check of the test itself
        }
        long sent = now;
        log(Thread.currentThread().getName() + " sends " + request);
        sends.add(new Send(InMemoryStorage.client(), request.op(), request.object(), sent));
        calls.computeIfAbsent(Thread.currentThread(), t -> java.util.Collections.synchronizedList(new ArrayList<>())).add(request.op());
        String client = InMemoryStorage.client();
        Yield y = new Yield(request.toString()) {
            @Override
            List<String> options() {
                List<String> o = new ArrayList<>();
                boolean late = now - sent > operationTimeout;
                if (client != null && partitioned(client)) {
                    // cut off from GCS: the request is lost on its way, or applied with its reply lost (a create that commits)
                    o.add("drop");
                    o.add("lose reply");
                    return o;
                }
                if (!late) {
                    o.add("deliver");
                }
                if (faults) {
                    if (!late) {
                        o.add("deliver");
                        o.add("503");
                    }
                    o.add("lose reply");
                    o.add("drop");
                }
                if (interruptPending() && !late) {
                    for (int i = 0; i < interruptWeight; i++) {
                        o.add("interrupted");
                        if (interruptsMayCommit) {
                            o.add("interrupted after commit");
                        }
                    }
                }
                return o;
            }

            @Override
            long bound() {
                return sent + operationTimeout;
            }
        };
        String d = y.await();
        decisions.computeIfAbsent(Thread.currentThread(), t -> java.util.Collections.synchronizedList(new ArrayList<>()))
                .add(request.op() + " " + d);
        switch (d) {
            case "deliver":
                return applySentAt(sent, apply);
            case "lose reply":
                LOSING.set(true);
                try {
                    applySentAt(sent, apply);
                } catch (StorageException ignored) {
                    // its reply is lost either way
                } finally {
                    LOSING.remove();
                }
                throw timeout(request);
            case "503":
                throw new StorageException(503, "Service Unavailable (explorer)");
            case "interrupted":
                throw new StorageException(0, "interrupted during the client's backoff (explorer)");
            case "interrupted after commit":
                // the client's first try committed and its reply was lost; the interrupt broke the backoff before its retry
                LOSING.set(true);
                try {
                    applySentAt(sent, apply);
                } catch (StorageException ignored) {
                    // its reply is lost either way
                } finally {
                    LOSING.remove();
                }
                throw new StorageException(0, "interrupted during the client's backoff, after a try whose reply was lost (explorer)");
            default: // drop, abort
                throw timeout(request);
        }
    }

    /** Set while a request whose reply will be lost is applied on this thread. */
    private static final ThreadLocal<Boolean> LOSING = new ThreadLocal<>();

    /** Whether the write being applied on this thread will have its reply lost (the bucket's observer asks). */
    static boolean replyOfTheRequestAppliedIsLost() {
        return LOSING.get() != null;
    }

    /** The virtual instant at which the request being applied on this thread was sent (null: none). */
    private static final ThreadLocal<Long> SENT = new ThreadLocal<>();

    /** When the request whose write is being applied on this thread was sent (the bucket's observer asks; null: none). */
    static Long sendTimeOfTheRequestApplied() {
        return SENT.get();
    }

    private static Object applySentAt(long sent, InMemoryStorage.Apply apply) throws StorageException {
        SENT.set(sent);
        try {
            return apply.run();
        } finally {
            SENT.remove();
        }
    }

    private static StorageException timeout(InMemoryStorage.Request request) {
        return new StorageException(new SocketTimeoutException("Read timed out (explorer: " + request + ")"));
    }

    private abstract class TimedYield extends Yield {
        final long due;

        TimedYield(String what, long nanos) {
            super(what);
            if (aborted) {
                // the exploration is over (the test closes its registries): a timed wait lets time pass, so that a loop
                // waiting for time (a write window on a drifting ticker) ends instead of spinning in frozen time
                now += Math.min(Math.max(0, nanos), Duration.ofDays(1).toNanos());
            }
            this.due = nanos >= Long.MAX_VALUE / 4 ? Long.MAX_VALUE : now + Math.max(0, nanos);
        }

        @Override
        long due() {
            return due;
        }

        List<String> timed(boolean ready) {
            List<String> o = new ArrayList<>();
            if (ready) {
                o.add("ready");
            }
            if (now >= due) {
                o.add("timeout");
            }
            if (interruptPending()) {
                o.add("interrupted");
            }
            return o;
        }
    }

    @Override
    public boolean await(CountDownLatch latch, long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (latch.getCount() == 0) {
            return true;
        }
        calls.computeIfAbsent(Thread.currentThread(), t -> java.util.Collections.synchronizedList(new ArrayList<>())).add("sleep");
        latchesAwaited.computeIfAbsent(Thread.currentThread(), t -> java.util.Collections.synchronizedList(new ArrayList<>())).add(latch);
        latchAwaitsBegun.merge(Thread.currentThread(), 1, Integer::sum);
        inLatchAwait.add(Thread.currentThread());
        waitingFor.put(Thread.currentThread(), latch);
        try {
            String d = new TimedYield("await latch " + Duration.ofNanos(nanos), nanos) {
                @Override
                List<String> options() {
                    return timed(latch.getCount() == 0);
                }
            }.await();
            return finish(d, () -> latch.getCount() == 0);
        } finally {
            waitingFor.remove(Thread.currentThread());
            inLatchAwait.remove(Thread.currentThread());
        }
    }

    // ------------------------------------------------------------------ the wait-for graph (bounded stalls, rule 14)

    /**
     * Per controlled thread, what its timed wait waits for now: a latch ({@link #await}) or an executor's termination
     * ({@link VirtualExecutor#awaitTermination}). With {@link #latchEnders} and the owners of the locks threads are
     * blocked on, the edges of the wait-for graph that {@link #waitCycles} looks for cycles in.
     */
    final java.util.Map<Thread, Object> waitingFor = new java.util.concurrent.ConcurrentHashMap<>();

    /** What a latch stands for and the threads that can count it down (an explorer's knowledge of the engine). */
    record Enders(String what, Set<Thread> threads) {
    }

    /** Who can count down a latch a wait waits for; null: not known (a latch of the scenario's own, say). */
    volatile java.util.function.Function<CountDownLatch, Enders> latchEnders = l -> null;

    private boolean pending(Object target) {
        return target instanceof CountDownLatch l ? l.getCount() > 0 : !((VirtualExecutor) target).isTerminated();
    }

    private Enders enders(Object target) {
        if (target instanceof CountDownLatch l) {
            return latchEnders.apply(l);
        }
        VirtualExecutor e = (VirtualExecutor) target;
        return new Enders("the termination of the " + e.kind + " threads", new LinkedHashSet<>(e.runningThreads));
    }

    /**
     * Rule 14's promise that close() and release() wait only for work that can end, judged on the wait-for graph at a
     * quiescent point: a thread in a timed wait of the engine (a latch, an executor's termination) whose waited-for work
     * waits — through locks held (a {@code ReentrantLock}, a monitor) and further such waits — for the waiting thread
     * itself. Such a wait cannot end before its bound: it sits out the whole bound, then gives up (a bounded stall; with
     * no bound it would be a deadlock). Returns a description of each cycle found (empty: none).
     */
    List<String> waitCycles() {
        List<String> found = new ArrayList<>();
        for (java.util.Map.Entry<Thread, Object> e : new ArrayList<>(waitingFor.entrySet())) {
            Thread w = e.getKey();
            Object target = e.getValue();
            if (!pending(target)) {
                continue;
            }
            Enders enders = enders(target);
            if (enders == null) {
                continue;
            }
            for (Thread t : enders.threads()) {
                List<String> path = pathTo(w, t, new java.util.HashSet<>());
                if (path != null) {
                    found.add(w.getName() + " waits for " + enders.what() + " (" + t.getName() + ")" + String.join("", path));
                    break;
                }
            }
        }
        return found;
    }

    /** The edges from {@code from} back to {@code w} in the wait-for graph, described; null if none. */
    private List<String> pathTo(Thread w, Thread from, Set<Thread> visited) {
        if (from == w || !visited.add(from) || !from.isAlive()) {
            return null;
        }
        java.lang.management.ThreadInfo info = THREADS.getThreadInfo(from.getId());
        if (info != null && info.getLockOwnerId() != -1) {
            Thread owner = threads.stream().filter(t -> t.getId() == info.getLockOwnerId()).findFirst().orElse(null);
            if (owner != null) {
                String edge = ", " + from.getName() + " is blocked on " + info.getLockName() + " held by " + owner.getName();
                if (owner == w) {
                    return new ArrayList<>(List.of(edge));
                }
                List<String> rest = pathTo(w, owner, visited);
                if (rest != null) {
                    rest.add(0, edge);
                    return rest;
                }
            }
        }
        Object target = waitingFor.get(from);
        Enders enders = target == null || !pending(target) ? null : enders(target);
        if (enders != null) {
            for (Thread t : enders.threads()) {
                String edge = ", " + from.getName() + " waits for " + enders.what() + " (" + t.getName() + ")";
                if (t == w) {
                    return new ArrayList<>(List.of(edge));
                }
                List<String> rest = pathTo(w, t, visited);
                if (rest != null) {
                    rest.add(0, edge);
                    return rest;
                }
            }
        }
        return null;
    }

    /** Threads inside {@link #await} now (the engine's sleep on its closing latch: a waiter between looks, rule 16). */
    final Set<Thread> inLatchAwait = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Per thread, how many {@link #await}s it has begun (so that a check can tell one sleep from the next). */
    final java.util.Map<Thread, Integer> latchAwaitsBegun = new java.util.concurrent.ConcurrentHashMap<>();

    /** Per thread, the latches it waited for (not counted down yet as it began to wait), in order: what a wait was for. */
    final java.util.Map<Thread, List<CountDownLatch>> latchesAwaited = new java.util.concurrent.ConcurrentHashMap<>();

    /** A thread queued on a local permit of the engine ({@link #tryAcquire}) since a virtual instant. */
    record PermitWait(Thread thread, long since, Semaphore permit) {
    }

    /** The threads queued on a local permit now. */
    private final Set<PermitWait> permitWaits = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The threads queued on a local permit now, and since when (virtual nanoseconds, as {@link #nanoTime}). */
    List<PermitWait> permitWaits() {
        return new ArrayList<>(permitWaits);
    }

    /** Per thread, its waits for a local permit (the name held by another thread of its process) that ended without it. */
    final java.util.Map<Thread, Integer> permitWaitsEnded = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public boolean tryAcquire(Semaphore permit, long nanos) throws InterruptedException {
        PermitWait queued = new PermitWait(Thread.currentThread(), now, permit);
        permitWaits.add(queued);
        try {
            while (true) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (permit.tryAcquire()) {
                    return true;
                }
                long left = nanos;
                String d = new TimedYield("local permit " + Duration.ofNanos(nanos), left) {
                    @Override
                    List<String> options() {
                        return timed(permit.availablePermits() > 0);
                    }
                }.await();
                if (!d.equals("ready")) {
                    boolean took = finish(d, permit::tryAcquire);
                    if (!took) {
                        permitWaitsEnded.merge(Thread.currentThread(), 1, Integer::sum);
                    }
                    return took;
                }
            }
        } finally {
            permitWaits.remove(queued);
        }
    }

    @Override
    public void sleep(long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        finish(new TimedYield("sleep " + Duration.ofNanos(nanos), nanos) {
            @Override
            List<String> options() {
                return timed(false);
            }
        }.await(), () -> true);
    }

    /** A scenario's own wait of virtual time (an actor holding its lease for a while), interruptible. */
    void sleepVirtual(Duration d) throws InterruptedException {
        sleep(d.toNanos());
    }

    /** A scenario's pause (a slow listener): the explorer decides when it goes on. */
    void pause(String what) {
        new Yield(what) {
            @Override
            List<String> options() {
                return List.of("continue");
            }
        }.await();
    }

    /**
     * A step of the engine whose order other threads can see (a release begun, close() between its phases): the
     * explorer decides when this thread goes on, so the windows between such steps are explored too.
     */
    @Override
    public void yieldPoint(String step) {
        if (aborted || !threads.contains(Thread.currentThread())) {
            return;
        }
        // A step of the loss, taken under the lease's monitor (rule 20), and a refresh between its reply and its
        // confirmation (rule 11: the deadline may pass there): the thread is not paused there for long (time moves at
        // most LATENESS past it), so that "told lost soon" and "no loss without a fault" are judged on the engine, not on
        // a process pause.
        long bound = step.startsWith("loss of") || step.endsWith(": reply in") ? now + LATENESS : Long.MAX_VALUE;
        long parkedAt = now;
        parkedAtStep.computeIfAbsent(Thread.currentThread(), t -> java.util.Collections.synchronizedList(new ArrayList<>()))
                .add(new YieldAt(step, parkedAt, Long.MAX_VALUE));
        new Yield(step) {
            @Override
            List<String> options() {
                return List.of("continue");
            }

            @Override
            long bound() {
                return bound;
            }
        }.await();
        yields.computeIfAbsent(Thread.currentThread(), t -> java.util.Collections.synchronizedList(new ArrayList<>()))
                .add(new YieldAt(step, parkedAt, now));
    }

    /** A yield point a thread passed: its step, when it parked there and when it went on (virtual nanos). */
    record YieldAt(String step, long parkedAt, long resumedAt) {
    }

    /**
     * Per thread, the yield points it passed, in order. A yield point of the engine is not bounded in virtual time (the
     * schedule may leave a thread there while time moves: a pause of that thread), so a check of how long a call took
     * in the engine's own waits leaves that time out (close()'s one bound, rule 14).
     */
    final java.util.Map<Thread, List<YieldAt>> yields = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Per thread, the yield points it reached, in order, as it parked there (resumedAt unknown: Long.MAX_VALUE): a step
     * the thread has taken though the schedule has not let it go on yet (a release begun, the thread still parked).
     */
    final java.util.Map<Thread, List<YieldAt>> parkedAtStep = new java.util.concurrent.ConcurrentHashMap<>();

    private static boolean finish(String decision, Supplier<Boolean> ready) throws InterruptedException {
        switch (decision) {
            case "ready":
                return true;
            case "interrupted":
                Thread.interrupted();
                throw new InterruptedException();
            default: // timeout, abort
                return ready.get();
        }
    }

    // ------------------------------------------------------------------ executors

    /** Virtual time, nanoseconds: the registries' ticker and the clock of the engine's sleeps. */
    @Override
    public long nanoTime() {
        return now;
    }

    /**
     * The engine's jitter, seeded from this world's seed: with jitter from anywhere else, virtual time moves by other
     * amounts on every run and a seed does not replay its schedule. (A {@link Random} is safe across threads.)
     */
    private final Random jitter;

    @Override
    public java.util.random.RandomGenerator random() {
        return jitter;
    }

    /** Ids (owner, lease, refresh) from the seed too: the engine's maps keyed by them iterate in their order. */
    private final Random ids;

    @Override
    public String randomId(int bytes) {
        byte[] b = new byte[bytes];
        ids.nextBytes(b);
        return java.util.HexFormat.of().formatHex(b);
    }

    /** A single-thread scheduler, as the engine's real one: one task at a time (a task that blocks holds up the next). */
    @Override
    public ScheduledExecutorService timer(ThreadFactory threads) {
        return new VirtualExecutor(threads, true);
    }

    @Override
    public ExecutorService refreshThreads(int maxThreads, Duration keepAlive, ThreadFactory threads) {
        return new VirtualExecutor(threads, false);
    }

    @Override
    public ExecutorService eventThreads(ThreadFactory threads) {
        return new VirtualExecutor(threads, false);
    }

    /** A task of a virtual executor: due at a virtual instant, run on a new thread of its executor's factory. */
    private final class Task extends FutureTask<Object> implements ScheduledFuture<Object> {
        final VirtualExecutor executor;
        final long due;
        final long seq;
        volatile boolean started;

        Task(VirtualExecutor executor, Callable<Object> body, long due) {
            super(body);
            this.executor = executor;
            this.due = due;
            this.seq = nextOrder();
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - now, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            synchronized (lock) {
                if (!started) {
                    tasks.remove(this);
                }
            }
            return cancelled;
        }

        @Override
        protected void done() {
            synchronized (lock) {
                executor.running.remove(this);
            }
        }
    }

    private final class VirtualExecutor extends AbstractExecutorService implements ScheduledExecutorService {
        private final ThreadFactory factory;
        /** The name of this executor's threads (the first one's, for the trace). */
        final String kind;
        private volatile boolean shutdown;
        /** Started, not done. Guarded by {@link #lock}. */
        final Set<Task> running = new LinkedHashSet<>();
        final Set<Thread> runningThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();

        /** One task at a time (a single-thread scheduler). */
        final boolean serial;

        VirtualExecutor(ThreadFactory factory, boolean serial) {
            this.factory = factory;
            this.serial = serial;
            this.kind = factory.newThread(() -> { }).getName().replaceAll("\\d+$", "");
        }

        private Task submitAt(Callable<Object> body, long delayNanos) {
            if (shutdown) {
                throw new RejectedExecutionException("shut down");
            }
            Task t = new Task(this, body, now + Math.max(0, delayNanos));
            synchronized (lock) {
                tasks.add(t);
            }
            return t;
        }

        void start(Task t) {
            synchronized (lock) {
                tasks.remove(t);
                t.started = true;
                running.add(t);
            }
            Thread th = factory.newThread(() -> {
                runningThreads.add(Thread.currentThread());
                try {
                    t.run();
                } finally {
                    runningThreads.remove(Thread.currentThread());
                }
            });
            th.setDaemon(true);
            created(th);
            th.start();
        }

        /** Whether a due task of this executor may start now (a serial one runs one task at a time). */
        boolean mayStart() {
            return !serial || running.isEmpty();
        }

        boolean idle() {
            synchronized (lock) {
                return running.isEmpty() && tasks.stream().noneMatch(t -> t.executor == this);
            }
        }

        @Override
        public void execute(Runnable command) {
            submitAt(Executors.callable(command), 0);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return submitAt(Executors.callable(command), unit.toNanos(delay));
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown = true;
            List<Runnable> dropped = new ArrayList<>();
            synchronized (lock) {
                for (Task t : new ArrayList<>(tasks)) {
                    if (t.executor == this) {
                        tasks.remove(t);
                        t.cancel(false);
                        dropped.add(t);
                    }
                }
            }
            runningThreads.forEach(Thread::interrupt); // as ThreadPoolExecutor.shutdownNow interrupts its workers
            return dropped;
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown && idle();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (isTerminated()) {
                return true;
            }
            waitingFor.put(Thread.currentThread(), this);
            try {
                String d = new TimedYield("await termination " + Duration.ofNanos(unit.toNanos(timeout)), unit.toNanos(timeout)) {
                    @Override
                    List<String> options() {
                        return timed(isTerminated());
                    }
                }.await();
                return finish(d, this::isTerminated);
            } finally {
                waitingFor.remove(Thread.currentThread());
            }
        }
    }

    private static final class Executors {
        static Callable<Object> callable(Runnable r) {
            return () -> {
                r.run();
                return null;
            };
        }
    }

    // ------------------------------------------------------------------ actors and the explorer

    /** A caller of the public API: a controlled thread the explorer starts when it chooses. */
    final class Actor {
        final String name;
        final ThrowingRunnable body;
        Thread thread;
        volatile Throwable failure;
        volatile boolean done;

        Actor(String name, ThrowingRunnable body) {
            this.name = name;
            this.body = body;
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    Actor actor(String name, ThrowingRunnable body) {
        Actor a = new Actor(name, body);
        actors.add(a);
        return a;
    }

    /** Thrown by {@link #explore} when a run fails: the failure, the seed and the schedule. */
    static final class ExplorationFailure extends AssertionError {
        ExplorationFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Runs the actors to their end under the seeded schedule, calling {@code check} at every quiescent point (it
     * throws AssertionError on a violation). Fails on a violation, an actor's unexpected exception, a hang (no step
     * possible, an actor not done), or more than {@code maxSteps} steps.
     */
    void explore(int maxSteps, Duration maxVirtual, Runnable check) {
        long begin = now;
        int steps = 0;
        try {
            while (true) {
                settle();
                check.run();
                // The budget of virtual time counts from the last actor's start: an actor the schedule starts late
                // (a close after 70 s, started at 65 s) is given its whole time too. Counted from the first step, it
                // was cut off with time left to run, reported as a hang (seed -2838921146019854253).
                long end = Math.max(begin, lastActorStart) + maxVirtual.toNanos();
                if (actors.stream().allMatch(a -> a.done)) {
                    // Every caller returned: deliver what is in flight and run what is due, without moving time.
                    if (!stepWithoutTime()) {
                        return;
                    }
                } else {
                    List<Runnable> choices = new ArrayList<>();
                    List<String> labels = new ArrayList<>();
                    collect(choices, labels, true);
                    long advanceTo = nextDue();
                    // every actor starts at time 0 (a later start is a sleep of the scenario's own)
                    boolean canAdvance = advanceTo != Long.MAX_VALUE && advanceTo <= end && actors.stream().allMatch(a -> a.thread != null);
                    if (choices.isEmpty() && !canAdvance) {
                        settle(200); // a thread just let go by one of the engine's locks may not have run yet
                        if (actors.stream().allMatch(a -> a.done)) {
                            continue; // the last actor ran to its end meanwhile (it looked blocked for a moment): no hang
                        }
                        collect(choices, labels, true);
                        advanceTo = nextDue();
                        canAdvance = advanceTo != Long.MAX_VALUE && advanceTo <= end;
                    }
                    if (choices.isEmpty() && !canAdvance && actors.stream().allMatch(a -> a.done)) {
                        continue; // the last actor ended after the check above: not a hang
                    }
                    if (choices.isEmpty() && !canAdvance) {
                        throw new AssertionError("hang: no step possible at virtual " + Duration.ofNanos(now - begin)
                                + (advanceTo != Long.MAX_VALUE ? " (next due at " + Duration.ofNanos(advanceTo - begin)
                                + ", past the budget of " + maxVirtual + " from the last actor's start)" : "")
                                + " and actors not done: " + describeThreads());
                    }
                    int pick = random.nextInt(choices.size() + (canAdvance ? 1 : 0));
                    if (pick == choices.size()) {
                        now = advanceTo;
                        log("time -> " + Duration.ofNanos(advanceTo - Duration.ofHours(1).toNanos()));
                    } else {
                        log(labels.get(pick));
                        choices.get(pick).run();
                    }
                }
                if (++steps > maxSteps) {
                    throw new AssertionError("no end after " + maxSteps + " steps: " + describeThreads());
                }
            }
        } catch (AssertionError | RuntimeException e) {
            throw new ExplorationFailure("seed " + seed + ": " + e.getMessage() + "\nschedule (" + trace.size() + " steps):\n"
                    + String.join("\n", trace()), e);
        } finally {
            abort();
        }
    }

    /** One step that does not move time; false if none is possible. */
    private boolean stepWithoutTime() {
        List<Runnable> choices = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        collect(choices, labels, false);
        if (choices.isEmpty()) {
            return false;
        }
        int pick = random.nextInt(choices.size());
        log(labels.get(pick));
        choices.get(pick).run();
        return true;
    }

    private void collect(List<Runnable> choices, List<String> labels, boolean startActors) {
        synchronized (lock) {
            List<Yield> ys = new ArrayList<>(parked);
            ys.sort(Comparator.comparingLong(y -> y.seq));
            for (Yield y : ys) {
                for (String option : y.options()) {
                    choices.add(() -> decide(y, option));
                    labels.add(y + " -> " + option);
                }
            }
            List<Task> due = new ArrayList<>(tasks);
            due.sort(Comparator.comparingLong(t -> t.seq));
            for (Task t : due) {
                if (t.due <= now && !t.isCancelled() && t.executor.mayStart()) {
                    choices.add(() -> t.executor.start(t));
                    labels.add("run task #" + (t.seq >>> 32) + "." + (t.seq & 0xffffffffL) + " on a new " + t.executor.kind + " thread");
                }
            }
        }
        if (startActors) {
            for (Actor a : actors) {
                if (a.thread == null) {
                    choices.add(() -> start(a));
                    labels.add("start " + a.name);
                }
            }
        }
    }

    /** The next instant at which something becomes possible by time alone, within every bound; MAX_VALUE if none. */
    private long nextDue() {
        long next = Long.MAX_VALUE;
        long limit = Long.MAX_VALUE;
        synchronized (lock) {
            for (Task t : tasks) {
                if (t.isCancelled() || (t.due <= now && !t.executor.mayStart())) {
                    continue; // a due task of a busy single-thread scheduler waits for the task that runs
                }
                if (t.due > now) {
                    next = Math.min(next, t.due);
                } else {
                    limit = Math.min(limit, t.due + LATENESS);
                }
            }
            for (Yield y : parked) {
                if (y.due() > now && y.due() != Long.MAX_VALUE) {
                    next = Math.min(next, y.due());
                }
                limit = Math.min(limit, y.bound());
                if (y.due() <= now) {
                    limit = Math.min(limit, y.due() + LATENESS); // a timed wait that came due wakes as a due task runs
                }
                if (y.bound() <= now) {
                    limit = now;
                }
            }
        }
        if (limit <= now) {
            return Long.MAX_VALUE;
        }
        if (next == Long.MAX_VALUE) {
            return limit == Long.MAX_VALUE ? Long.MAX_VALUE : limit; // a request reaching its timeout
        }
        return Math.min(next, limit);
    }

    /** Virtual time at which the last actor was started (the budget of {@link #explore} counts from it). */
    private volatile long lastActorStart;

    /** Decided yields whose thread has not run yet. Guarded by {@link #lock}. */
    private final List<Yield> waking = new ArrayList<>();

    /** Threads parked at a yield point with an interrupt pending (see {@link Yield#await}). */
    private final Set<Thread> interruptsPending = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Interrupts {@code t} (a scenario's interrupter). A thread parked at a yield point is marked pending too, so that
     * it shows the interrupt among its options whether or not the OS has run it since.
     */
    void interrupt(Thread t) {
        synchronized (lock) {
            if (parked.stream().anyMatch(y -> y.thread == t)) {
                interruptsPending.add(t); // a thread not parked keeps its flag, which it may clear itself
            }
            t.interrupt();
        }
    }

    /** Registers a controlled thread, numbered in creation order (the explorer's thread creates them all). */
    private void created(Thread t) {
        synchronized (lock) {
            threadOrder.put(t, new long[] {++threadsCreated, 0});
        }
        threads.add(t);
    }

    /** The place of the next yield or task of the current thread among the options: (thread number << 32) | its count. */
    private long nextOrder() {
        long[] o = threadOrder.computeIfAbsent(Thread.currentThread(), t -> new long[] {0, 0});
        return (o[0] << 32) | ++o[1];
    }

    private void decide(Yield y, String option) {
        synchronized (lock) {
            parked.remove(y);
            waking.add(y);
        }
        y.decision = option;
        y.go.release();
    }

    private void start(Actor a) {
        Thread t = new Thread(() -> {
            try {
                a.body.run();
            } catch (Throwable e) {
                a.failure = e;
            } finally {
                a.done = true;
            }
        }, "actor-" + a.name);
        t.setDaemon(true);
        a.thread = t;
        lastActorStart = now;
        created(t);
        t.start();
    }

    /**
     * Waits until every controlled thread is parked at a yield point, ended, or blocked on one of the engine's locks
     * (then re-checked after a moment: a thread just let go by a lock shows as blocked until it runs).
     */
    private void settle() {
        settle(5);
    }

    /**
     * As {@link #settle()}, a thread blocked on one of the engine's locks counting as settled once it has stayed so
     * for {@code settleChecks} checks a millisecond apart.
     */
    private void settle(int settleChecks) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        int stable = 0;
        while (true) {
            boolean allParked = true;
            boolean quiet = true;
            Set<Thread> atYield = new java.util.HashSet<>();
            synchronized (lock) {
                waking.removeIf(y -> y.resumed || !y.thread.isAlive());
                if (!waking.isEmpty()) {
                    quiet = false;
                }
                parked.forEach(y -> atYield.add(y.thread));
            }
            for (Thread t : threads) {
                if (!t.isAlive()) {
                    if (t.getState() == Thread.State.NEW) {
                        quiet = false;
                    }
                    continue;
                }
                if (atYield.contains(t)) {
                    continue;
                }
                Thread.State s = t.getState();
                allParked = false;
                if (s == Thread.State.RUNNABLE || s == Thread.State.NEW || aboutToTakeAFreeLock(t, s)) {
                    quiet = false;
                    break;
                }
            }
            if (quiet && allParked) {
                return;
            }
            stable = quiet ? stable + 1 : 0;
            if (stable >= settleChecks) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("threads did not settle in 20 s (real; a thread spinning?): " + describeThreads());
            }
            if (quiet) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted");
                }
            } else {
                Thread.onSpinWait();
                Thread.yield();
            }
        }
    }

    private static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();

    /**
     * Whether {@code t}, blocked on a monitor or parked on a lock with an owner (a {@code ReentrantLock}), waits for one
     * that nobody holds: it was just let go and will take it as soon as it runs, so it is not settled. Without this
     * look, such a thread counted as settled once it had stayed blocked for a few checks a millisecond apart — on a
     * loaded machine it can stay so longer before the OS runs it, and the explorer then chose its next step among
     * other options than on an idle machine (the same seed, another schedule: CI's failure on seed -1812807406405887).
     * A thread waiting on a latch, a condition or a semaphore has no owner to look at: the checks still judge it.
     */
    private static boolean aboutToTakeAFreeLock(Thread t, Thread.State s) {
        if (s != Thread.State.BLOCKED && s != Thread.State.WAITING && s != Thread.State.TIMED_WAITING) {
            return false;
        }
        java.lang.management.ThreadInfo info = THREADS.getThreadInfo(t.getId());
        if (info == null || info.getLockName() == null || info.getLockOwnerId() != -1) {
            return false;
        }
        String lockName = info.getLockName();
        return info.getThreadState() == Thread.State.BLOCKED
                || lockName.startsWith("java.util.concurrent.locks.ReentrantLock$")
                || lockName.startsWith("java.util.concurrent.locks.ReentrantReadWriteLock$");
    }

    String describeThreads() {
        StringBuilder b = new StringBuilder();
        synchronized (lock) {
            for (Thread t : threads) {
                if (!t.isAlive()) {
                    continue;
                }
                b.append("\n  ").append(t.getName()).append(' ').append(t.getState());
                parked.stream().filter(y -> y.thread == t).forEach(y -> b.append(" at ").append(y.what));
                StackTraceElement[] st = t.getStackTrace();
                for (int i = 0; i < Math.min(st.length, 40); i++) {
                    if (st[i].getClassName().startsWith("io.github.gcslock") || i < 4) {
                        b.append("\n      at ").append(st[i]);
                    }
                }
            }
            for (Actor a : actors) {
                b.append("\n  actor ").append(a.name).append(a.done ? " done" : a.thread == null ? " not started" : " running");
            }
        }
        return b.toString();
    }

    /** Ends the exploration: every yield point returns at once from now on (requests time out, waits end). */
    private void abort() {
        aborted = true;
        now += Duration.ofDays(100).toNanos(); // every budget of a wait left running ends
        synchronized (lock) {
            for (Yield y : new ArrayList<>(parked)) {
                y.decision = "abort";
                y.go.release();
            }
            parked.clear();
        }
        threads.forEach(Thread::interrupt);
    }

    /** The actors, for the scenario to report their failures. */
    Collection<Actor> actors() {
        return actors;
    }
}
