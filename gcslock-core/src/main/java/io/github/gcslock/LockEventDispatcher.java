package io.github.gcslock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs listener callbacks (registry listeners and {@link Lease#onLost} listeners) in order per lock
 * name, and never on the threads that refresh leases or enforce deadlines.
 *
 * <p>Why: a listener that blocks (an alert sent over HTTP on a lost lease, a Spring event listener)
 * used to run on one of the refresher's few threads while the lease's I/O lock was held, so a single
 * slow listener made other, healthy leases miss their refreshes and be declared lost; and a deadline
 * could not fire while such a listener ran.
 *
 * <p>How: each lock name has a queue, drained by a thread of this dispatcher's own pool — except a
 * release raised on an application thread, which that thread reports itself when nothing of the same
 * lock is pending (else it is queued behind what is). At most one thread drains a lock's queue at a time,
 * so the events of one lock are seen in the order they were raised, while a slow listener of one lock
 * never delays another lock's events (the pool grows as needed; its threads die when idle).
 */
final class LockEventDispatcher {

    private static final Logger log = LoggerFactory.getLogger(LockEventDispatcher.class);

    /** Set on the refresher's and the deadline timer's threads: events raised there go to the pool. */
    private static final ThreadLocal<Boolean> ENGINE_THREAD = new ThreadLocal<>();

    private final ExecutorService pool;
    /** Lock name → events not yet run; present while a thread drains it. Guarded by {@code this}. */
    private final Map<String, ArrayDeque<Runnable>> pending = new HashMap<>();
    /** Lock name → the thread running one of its events now. Guarded by {@code this}. */
    private final Map<String, Thread> running = new HashMap<>();

    LockEventDispatcher(EngineRuntime runtime) {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "gcslock-events-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.pool = runtime.eventThreads(tf); // grows as needed; idle threads die after 10 s
    }

    /** Wraps the body of an engine thread (refresher, deadline timer) so events it raises go to the pool. */
    static Runnable engineThread(Runnable body) {
        return () -> {
            ENGINE_THREAD.set(Boolean.TRUE);
            body.run();
        };
    }

    /**
     * Runs {@code body} on the calling thread as if it were an engine thread: the events it raises go to the listener
     * threads instead of running here (close() releasing every lease: a slow listener of one lock must not hold up
     * the release of the others).
     */
    static void asEngineThread(Runnable body) {
        Boolean before = ENGINE_THREAD.get();
        ENGINE_THREAD.set(Boolean.TRUE);
        try {
            body.run();
        } finally {
            if (before == null) {
                ENGINE_THREAD.remove();
            }
        }
    }

    static boolean onEngineThread() {
        return ENGINE_THREAD.get() != null;
    }

    /** Runs {@code event} on this dispatcher's threads, after every earlier event of {@code lockName}. */
    void dispatch(String lockName, Runnable event) {
        if (enqueue(lockName, event)) {
            pool.execute(() -> drain(lockName));
        }
    }

    /**
     * Runs {@code event} after every earlier event of {@code lockName}: on the calling thread when it is an
     * application thread and nothing of that lock is pending (so a caller's release is reported before
     * its call returns, as before), otherwise on this dispatcher's threads.
     */
    void dispatchOrRunHere(String lockName, Runnable event) {
        queueToRunHere(lockName, event).run();
    }

    /**
     * Takes {@code event}'s place among the events of {@code lockName} now; the returned task delivers it as
     * {@link #dispatchOrRunHere} does, and must be run. Lets a release queue its "released" before the name is
     * free locally, so the next lease's "acquired" comes after it (rule 20).
     */
    Runnable queueToRunHere(String lockName, Runnable event) {
        if (!enqueue(lockName, event)) {
            return () -> { }; // the thread draining this lock runs it after the earlier events
        }
        return () -> {
            if (onEngineThread()) {
                pool.execute(() -> drain(lockName));
            } else {
                drain(lockName, event); // its own event only: what is raised meanwhile goes to the listener threads
            }
        };
    }

    /**
     * Runs {@code event} as the next event of {@code lockName}: on the calling thread, at once, when nothing of that
     * lock is pending or running — events of the lock raised while it runs (a new lease's first refreshes) wait for
     * it and then run on this dispatcher's threads, and a failure of any kind reaches the caller. Otherwise (a
     * previous lease's slow "lost" listener still runs, its "released" is pending) the event is queued behind them
     * and runs on this dispatcher's threads, and this returns at once: the events of one lock never overlap, across
     * its leases too, and an acquiring thread never waits for listeners (rule 20). Called from inside one of the
     * lock's own events (a listener acquiring the name again), it runs at once: that thread cannot wait for itself.
     * For the acquisition events ("acquired", "notAcquired", "tookOver", "fencingTokenRegression").
     *
     * @return true if {@code event} ran on the calling thread, false if it was queued
     */
    boolean runHereOrQueue(String lockName, Runnable event) {
        boolean claimed;
        synchronized (this) {
            ArrayDeque<Runnable> queue = pending.get(lockName);
            if (queue == null) {
                pending.put(lockName, new ArrayDeque<>());
                claimed = true;
            } else if (running.get(lockName) == Thread.currentThread()) {
                claimed = false; // nested in one of this lock's events
            } else {
                queue.add(event); // whoever drains or holds this lock's queue now runs it after the earlier events
                return false;
            }
        }
        Thread previous = claimed ? running(lockName, Thread.currentThread()) : null;
        try {
            event.run();
        } finally {
            if (claimed) {
                boolean queuedMeanwhile;
                synchronized (this) {
                    restore(lockName, previous);
                    queuedMeanwhile = !pending.get(lockName).isEmpty();
                    if (!queuedMeanwhile) {
                        pending.remove(lockName); // nothing waited: a release on this thread may run here later
                    }
                }
                if (queuedMeanwhile) {
                    pool.execute(() -> drain(lockName));
                }
            }
        }
        return true;
    }

    /** Marks {@code thread} as running an event of {@code lockName}; returns the mark it replaces. */
    private synchronized Thread running(String lockName, Thread thread) {
        return running.put(lockName, thread);
    }

    private void restore(String lockName, Thread previous) {
        if (previous == null) {
            running.remove(lockName);
        } else {
            running.put(lockName, previous);
        }
    }

    /** Queues {@code event}; true if the caller must start draining (no thread drains this lock now). */
    private boolean enqueue(String lockName, Runnable event) {
        synchronized (this) {
            ArrayDeque<Runnable> queue = pending.get(lockName);
            if (queue != null) {
                queue.add(event); // a thread is draining this lock's events: it runs this one after them
                return false;
            }
            queue = new ArrayDeque<>();
            queue.add(event);
            pending.put(lockName, queue);
            return true;
        }
    }

    private void drain(String lockName) {
        drain(lockName, null);
    }

    /**
     * Runs the events of {@code lockName} in order; an application thread ({@code last} its own event) stops after its
     * own and hands the rest to the listener threads: events raised meanwhile (another lease's, the refresher's) are
     * never delivered on the caller's thread, which a stream of them could otherwise keep there without bound (rule 20).
     */
    private void drain(String lockName, Runnable last) {
        while (true) {
            Runnable next;
            Thread previous;
            synchronized (this) {
                ArrayDeque<Runnable> queue = pending.get(lockName);
                next = queue.poll();
                if (next == null) {
                    pending.remove(lockName);
                    return;
                }
                previous = running.put(lockName, Thread.currentThread());
            }
            try {
                next.run();
            } catch (Throwable t) { // an Error too: the remaining events of this lock must still run
                log.warn("a listener of lock '{}' threw; ignored", lockName, t);
            } finally {
                synchronized (this) {
                    restore(lockName, previous);
                }
            }
            if (next == last) {
                boolean more;
                synchronized (this) {
                    more = !pending.get(lockName).isEmpty();
                    if (!more) {
                        pending.remove(lockName);
                    }
                }
                if (more) {
                    pool.execute(() -> drain(lockName));
                }
                return;
            }
        }
    }
}
