package io.github.gcslock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs listener callbacks (registry listeners and {@link Lease#onLost} listeners) in order per lock
 * and listener, and never on the threads that refresh leases or enforce deadlines.
 *
 * <p>Why: a listener that blocks (an alert sent over HTTP on a lost lease, a Spring event listener)
 * used to run on one of the refresher's few threads while the lease's I/O lock was held, so a single
 * slow listener made other, healthy leases miss their refreshes and be declared lost; and a deadline
 * could not fire while such a listener ran.
 *
 * <p>How: each {@link Channel} (one registry listener's view of one lock, or one lease's {@code onLost}
 * listeners) has a queue, drained by a thread of this dispatcher's own pool, except an application thread's own
 * event, which that thread reports itself when nothing of the channel is pending. At most one thread drains a
 * channel at a time, so each listener sees the events of one lock in the order they were raised, while a slow
 * listener delays only its own later events: never another listener's, another lock's, or another lease's
 * {@code onLost} (rule 20). The pool grows as needed; its threads die when idle.
 */
final class LockEventDispatcher {

    private static final Logger log = LoggerFactory.getLogger(LockEventDispatcher.class);

    /** Set on the refresher's and the deadline timer's threads: events raised there go to the pool. */
    private static final ThreadLocal<Boolean> ENGINE_THREAD = new ThreadLocal<>();

    /**
     * One listener's events of one lock, the unit of order (rule 20): a registry {@link LockEventListener} and a
     * lock name, or a lease (its {@code onLost} listeners). The listener is compared by identity: two listeners never
     * share a channel, so one that blocks holds up no other.
     */
    static final class Channel {
        final String lock;
        private final Object listener;

        Channel(String lock, Object listener) {
            this.lock = lock;
            this.listener = listener;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Channel c && c.lock.equals(lock) && c.listener == listener;
        }

        @Override
        public int hashCode() {
            return lock.hashCode() * 31 + System.identityHashCode(listener);
        }
    }

    private final ExecutorService pool;
    /** Channel → events not yet run; present while a thread drains it. Guarded by {@code this}. */
    private final Map<Channel, ArrayDeque<Runnable>> pending = new HashMap<>();
    /** Channel → the thread running one of its events now. Guarded by {@code this}. */
    private final Map<Channel, Thread> running = new HashMap<>();

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

    /** Runs {@code event} on this dispatcher's threads, after every earlier event of {@code channel}. */
    void dispatch(Channel channel, Runnable event) {
        if (enqueue(channel, event)) {
            pool.execute(() -> drain(channel));
        }
    }

    /**
     * Runs {@code event} after every earlier event of {@code channel}: on the calling thread when it is an
     * application thread and nothing of that lock is pending (so a caller's release is reported before
     * its call returns, as before), otherwise on this dispatcher's threads.
     */
    void dispatchOrRunHere(Channel channel, Runnable event) {
        queueToRunHere(channel, event).run();
    }

    /**
     * Takes {@code event}'s place among the events of {@code channel} now; the returned task delivers it as
     * {@link #dispatchOrRunHere} does, and must be run. Lets a release queue its "released" before the name is
     * free locally, so the next lease's "acquired" comes after it (rule 20).
     */
    Runnable queueToRunHere(Channel channel, Runnable event) {
        if (!enqueue(channel, event)) {
            return () -> { }; // the thread draining this lock runs it after the earlier events
        }
        return () -> {
            if (onEngineThread()) {
                pool.execute(() -> drain(channel));
            } else {
                drain(channel, event); // its own event only: what is raised meanwhile goes to the listener threads
            }
        };
    }

    /**
     * Runs {@code events.get(i)} as the next event of {@code channels.get(i)}, for each i in turn: on the calling thread,
     * at once, for each channel with nothing pending or running — events raised on it meanwhile (a new lease's first
     * refreshes) wait for it and then run on this dispatcher's threads, and an {@link Error} reaches the caller once
     * every event was run or queued. Every such channel is claimed before the first event runs, so a slow listener
     * told first cannot let the refresher's events reach a listener told later ahead of its own event ("acquired"
     * first among a lease's events). A channel with earlier events pending or running (a previous lease's slow "lost"
     * listener, its "released") gets the event queued behind them, run on this dispatcher's threads: a listener's
     * events never overlap, across the lock's leases too, and an acquiring thread never waits for listeners (rule 20).
     * Called from inside one of the channel's own events (a listener acquiring the name again), it runs at once: that
     * thread cannot wait for itself. For the acquisition events ("acquired", "notAcquired", "tookOver",
     * "fencingTokenRegression").
     */
    void runHereOrQueue(List<Channel> channels, List<Runnable> events) {
        int n = channels.size();
        boolean[] claimed = new boolean[n];
        boolean[] here = new boolean[n];
        synchronized (this) {
            for (int i = 0; i < n; i++) {
                Channel channel = channels.get(i);
                ArrayDeque<Runnable> queue = pending.get(channel);
                if (queue == null) {
                    pending.put(channel, new ArrayDeque<>());
                    claimed[i] = here[i] = true;
                } else if (running.get(channel) == Thread.currentThread()) {
                    here[i] = true; // nested in one of this channel's events
                } else {
                    queue.add(events.get(i)); // whoever drains or holds this channel now runs it after the earlier events
                }
            }
        }
        Error first = null;
        for (int i = 0; i < n; i++) {
            if (!here[i]) {
                continue;
            }
            Channel channel = channels.get(i);
            Thread previous = claimed[i] ? running(channel, Thread.currentThread()) : null;
            try {
                events.get(i).run();
            } catch (Error e) {
                if (first == null) {
                    first = e;
                } else if (first != e) {
                    first.addSuppressed(e);
                }
            } finally {
                if (claimed[i]) {
                    boolean queuedMeanwhile;
                    synchronized (this) {
                        restore(channel, previous);
                        queuedMeanwhile = !pending.get(channel).isEmpty();
                        if (!queuedMeanwhile) {
                            pending.remove(channel); // nothing waited: a release on this thread may run here later
                        }
                    }
                    if (queuedMeanwhile) {
                        pool.execute(() -> drain(channel));
                    }
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Marks {@code thread} as running an event of {@code channel}; returns the mark it replaces. */
    private synchronized Thread running(Channel channel, Thread thread) {
        return running.put(channel, thread);
    }

    private void restore(Channel channel, Thread previous) {
        if (previous == null) {
            running.remove(channel);
        } else {
            running.put(channel, previous);
        }
    }

    /** Queues {@code event}; true if the caller must start draining (no thread drains this lock now). */
    private boolean enqueue(Channel channel, Runnable event) {
        synchronized (this) {
            ArrayDeque<Runnable> queue = pending.get(channel);
            if (queue != null) {
                queue.add(event); // a thread is draining this lock's events: it runs this one after them
                return false;
            }
            queue = new ArrayDeque<>();
            queue.add(event);
            pending.put(channel, queue);
            return true;
        }
    }

    private void drain(Channel channel) {
        drain(channel, null);
    }

    /**
     * Runs the events of {@code channel} in order; an application thread ({@code last} its own event) stops after its
     * own and hands the rest to the listener threads: events raised meanwhile (another lease's, the refresher's) are
     * never delivered on the caller's thread, which a stream of them could otherwise keep there without bound (rule 20).
     */
    private void drain(Channel channel, Runnable last) {
        while (true) {
            Runnable next;
            Thread previous;
            synchronized (this) {
                ArrayDeque<Runnable> queue = pending.get(channel);
                next = queue.poll();
                if (next == null) {
                    pending.remove(channel);
                    return;
                }
                previous = running.put(channel, Thread.currentThread());
            }
            try {
                next.run();
            } catch (Throwable t) { // an Error too: the remaining events of this lock must still run
                log.warn("a listener of lock '{}' threw; ignored", channel.lock, t);
            } finally {
                synchronized (this) {
                    restore(channel, previous);
                }
            }
            if (next == last) {
                boolean more;
                synchronized (this) {
                    more = !pending.get(channel).isEmpty();
                    if (!more) {
                        pending.remove(channel);
                    }
                }
                if (more) {
                    pool.execute(() -> drain(channel));
                }
                return;
            }
        }
    }
}
