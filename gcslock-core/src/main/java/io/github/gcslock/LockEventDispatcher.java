package io.github.gcslock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
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
 * listeners) has a queue, drained by a thread of this dispatcher's own pool. An application thread's own events
 * (its acquisition's, its release's, its requests') take their place in the queue when raised, as a
 * <em>reservation</em> that thread delivers itself when it gets to it, if nothing of the channel is ahead of it. A
 * reservation never holds a channel back: when a later event arrives behind one that its thread has not begun (that
 * thread still busy with another listener's event, or holding a lease's I/O lock), a pool thread takes it over and
 * runs it, then the later one. At most one thread runs a channel's events at a time, so each listener sees the events
 * of one lock in the order they were raised, one at a time, while a slow listener delays only its own later events:
 * never another listener's, another lock's, or another lease's {@code onLost} (rule 20). The pool grows as needed;
 * its threads die when idle.
 */
final class LockEventDispatcher {

    private static final Logger log = LoggerFactory.getLogger(LockEventDispatcher.class);

    /** Set on the refresher's and the deadline timer's threads: events raised there go to the pool. */
    private static final ThreadLocal<Boolean> ENGINE_THREAD = new ThreadLocal<>();

    /**
     * Set on an application thread while it holds a lease's I/O lock (a renewal, a release): the deliveries of the
     * events it raises meanwhile (its requests' outcomes), run once it has let the lock go (rule 20).
     */
    private static final ThreadLocal<List<Runnable>> HELD_BACK = new ThreadLocal<>();

    /**
     * One listener's events of one lock, the unit of order (rule 20): a registration of a registry
     * {@link LockEventListener} and a lock name, or a lease (its {@code onLost} listeners). The key is compared by
     * identity: two registrations never share a channel (one listener object registered twice included), so one that
     * blocks holds up no other.
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

    /** An event in a channel's queue. */
    private static final class Entry {
        final Runnable event;
        /** A thread has begun it (or is about to). Guarded by the dispatcher. */
        boolean taken;

        Entry(Runnable event) {
            this.event = event;
        }
    }

    /**
     * A channel's events not yet begun, and whether a thread delivers them: the one running one of its events, or a
     * pool thread on its way. Present while either is so. Guarded by the dispatcher. Not owned, it holds exactly one
     * entry: a reservation its thread has not begun (an entry queued behind another one that nobody delivers starts
     * a pool thread at once).
     */
    private static final class Lane {
        final ArrayDeque<Entry> queue = new ArrayDeque<>();
        boolean owned;
    }

    private final ExecutorService pool;
    /** Channel → its lane. Guarded by {@code this}. */
    private final Map<Channel, Lane> lanes = new HashMap<>();

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

    /**
     * The calling thread takes a lease's I/O lock (rule 20): until {@link #letGo} the events it raises take their place
     * in their channels at once, but it delivers them only then, so that no listener runs while it holds the lock — a
     * listener blocking in a renewal's request event would hold back the lease's refreshes until it was lost. Nested
     * calls (the lock is reentrant) are counted by the caller: only the outermost one calls this and {@link #letGo}.
     */
    static void holdBack() {
        if (HELD_BACK.get() == null) {
            HELD_BACK.set(new ArrayList<>());
        }
    }

    /** The calling thread has let the I/O lock go: delivers what it held back (see {@link #holdBack}). */
    static void letGo() {
        List<Runnable> held = HELD_BACK.get();
        HELD_BACK.remove();
        if (held != null) {
            held.forEach(Runnable::run);
        }
    }

    /** Runs {@code event} on this dispatcher's threads, after every earlier event of {@code channel}. */
    void dispatch(Channel channel, Runnable event) {
        boolean start;
        synchronized (this) {
            Lane lane = lanes.computeIfAbsent(channel, c -> new Lane());
            lane.queue.add(new Entry(event));
            // Else whoever delivers this channel runs it after the earlier events. A reservation not begun at its head
            // does not deliver it: the pool thread started here takes it over, then this one (rule 20).
            start = !lane.owned;
            lane.owned = true;
        }
        if (start) {
            pool.execute(() -> drain(channel)); // never on the calling thread: the refresher must not wait for a listener
        }
    }

    /**
     * Takes {@code event}'s place among the events of {@code channel} now (a reservation); the returned task delivers
     * it on the calling thread if nothing of the channel is ahead of it and no pool thread took it over meanwhile,
     * and must be run (else a later event of the channel takes it over). On an engine thread it is dispatched to the
     * pool at once and the task does nothing. A {@link RuntimeException} or {@link Error} it throws is logged.
     */
    Runnable reserve(Channel channel, Runnable event) {
        Entry entry = enqueue(channel, event);
        return entry == null ? () -> { } : () -> {
            Throwable t = deliverHere(channel, entry);
            if (t != null) {
                log.warn("a listener of lock '{}' threw; ignored", channel.lock, t);
            }
        };
    }

    /**
     * Runs {@code deliveries} ({@link #reserve}'s tasks) now, or, while this thread holds a lease's I/O lock, once it
     * lets it go ({@link #holdBack}). For the outcome of an application's request.
     */
    static void deliverOrHoldBack(List<Runnable> deliveries) {
        List<Runnable> held = HELD_BACK.get();
        if (held != null) {
            held.addAll(deliveries);
        } else {
            deliveries.forEach(Runnable::run);
        }
    }

    /**
     * Runs {@code events.get(i)} as the next event of {@code channels.get(i)}, for each i in turn, on the calling thread
     * unless it was taken over; an {@link Error} thrown here reaches the caller once every event was run or left to the
     * pool. Every event takes its place before the first one runs, so a slow listener told first cannot let the
     * refresher's events reach a listener told later ahead of its own event ("acquired" first among a lease's events);
     * and a later event behind a place this thread has not reached yet makes a pool thread take it over, so a listener
     * blocking here holds back no other listener (rule 20). A channel with earlier events pending or running (a previous
     * lease's slow "lost" listener, its "released"), or whose event this thread is running now (a listener acquiring its
     * lock again in its own callback), gets the event queued behind them: a listener's events never overlap, across the
     * lock's leases too, and an acquiring thread never waits for listeners. For the acquisition events ("acquired"
     * with "fencingTokenRegression" before it, "notAcquired", "tookOver").
     */
    void runHereOrQueue(List<Channel> channels, List<Runnable> events) {
        reserveHere(channels, events).run();
    }

    /**
     * As {@link #runHereOrQueue}, in two steps: every event takes its place now, and the returned task delivers them
     * (on the thread that runs it, which must run it; an {@link Error} thrown there reaches it). A lease's first events
     * take their places before its refreshes start, so that nothing of the lease comes before them (rule 20).
     */
    Runnable reserveHere(List<Channel> channels, List<Runnable> events) {
        int n = channels.size();
        Entry[] entries = new Entry[n];
        for (int i = 0; i < n; i++) {
            entries[i] = enqueue(channels.get(i), events.get(i));
        }
        return () -> deliverAllHere(channels, entries);
    }

    private void deliverAllHere(List<Channel> channels, Entry[] entries) {
        int n = entries.length;
        Error first = null;
        for (int i = 0; i < n; i++) {
            if (entries[i] == null) {
                continue;
            }
            Throwable t = deliverHere(channels.get(i), entries[i]);
            if (t instanceof Error e) {
                if (first == null) {
                    first = e;
                } else if (first != e) {
                    first.addSuppressed(e);
                }
            } else if (t != null) {
                log.warn("a listener of lock '{}' threw; ignored", channels.get(i).lock, t);
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Queues {@code event} in {@code channel}; the reservation this thread may deliver, or null when it went to the pool
     * (an engine thread). An entry queued behind another that nobody delivers yet (another thread's reservation, not
     * begun) starts a pool thread, which takes them both.
     */
    private Entry enqueue(Channel channel, Runnable event) {
        if (onEngineThread()) {
            dispatch(channel, event);
            return null;
        }
        Entry entry = new Entry(event);
        boolean start;
        synchronized (this) {
            Lane lane = lanes.computeIfAbsent(channel, c -> new Lane());
            lane.queue.add(entry);
            start = !lane.owned && lane.queue.size() > 1;
            if (start) {
                lane.owned = true;
            }
        }
        if (start) {
            pool.execute(() -> drain(channel));
        }
        return entry;
    }

    /**
     * Runs {@code entry} here if it is still this thread's to run: nothing of the channel ahead of it, no thread
     * delivering the channel (a pool thread that took it over, this thread inside one of the channel's own events).
     * Otherwise whoever delivers the channel runs it in turn. Events raised meanwhile are never run here: they go to
     * the pool once this one returns, so a stream of them cannot keep an application thread (rule 20). Returns what
     * the event threw, if anything.
     */
    private Throwable deliverHere(Channel channel, Entry entry) {
        synchronized (this) {
            Lane lane = lanes.get(channel);
            if (entry.taken || lane.owned || lane.queue.peek() != entry) {
                return null; // taken over, or behind events that whoever delivers this channel runs first
            }
            lane.queue.remove(entry); // not owned: this reservation is its only entry
            entry.taken = true;
            lane.owned = true;
        }
        Throwable thrown = null;
        try {
            entry.event.run();
        } catch (Throwable t) {
            thrown = t;
        } finally {
            boolean more;
            synchronized (this) {
                Lane lane = lanes.get(channel);
                more = !lane.queue.isEmpty();
                if (!more) {
                    lanes.remove(channel);
                }
            }
            if (more) {
                pool.execute(() -> drain(channel)); // still owned: handed to a pool thread
            }
        }
        return thrown;
    }

    /** Runs the events of {@code channel} in order, reservations not begun included, until none is left. */
    private void drain(Channel channel) {
        while (true) {
            Entry next;
            synchronized (this) {
                Lane lane = lanes.get(channel);
                next = lane.queue.poll();
                if (next == null) {
                    lanes.remove(channel);
                    return;
                }
                next.taken = true;
            }
            try {
                next.event.run();
            } catch (Throwable t) { // an Error too: the remaining events of this lock must still run
                log.warn("a listener of lock '{}' threw; ignored", channel.lock, t);
            }
        }
    }
}
