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
    private static final ThreadLocal<HeldBack> HELD_BACK = new ThreadLocal<>();

    /** The events a thread holds back ({@link #holdBack}), and how many holds back are open on it (they nest). */
    private static final class HeldBack {
        final List<Runnable> events = new ArrayList<>();
        int depth;
    }

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
        /** Guarded by the dispatcher (an event joined to it later, {@link #reserveAfterOwn}, extends it). */
        Runnable event;
        /** The thread whose reservation this is; null for an event dispatched to the pool. */
        final Thread owner;
        /** A thread has begun it (or is about to). Guarded by the dispatcher. */
        boolean taken;

        Entry(Runnable event, Thread owner) {
            this.event = event;
            this.owner = owner;
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
     * listener blocking in a renewal's request event would hold back the lease's refreshes until it was lost. A release
     * holds its events back too, from its beginning until it has ended (rules 14, 20: close() and a racing release()
     * wait for a release in flight, never for a listener). Holds back nest (a release takes the lease's I/O lock inside
     * its own): each {@code holdBack} is ended by one {@link #letGo}, and the outermost one delivers.
     */
    static void holdBack() {
        HeldBack held = HELD_BACK.get();
        if (held == null) {
            held = new HeldBack();
            HELD_BACK.set(held);
        }
        held.depth++;
    }

    /**
     * Ends one {@link #holdBack} of the calling thread (it let the I/O lock go, its release ended); the outermost one
     * delivers what was held back.
     */
    static void letGo() {
        HeldBack held = HELD_BACK.get();
        if (held == null || --held.depth > 0) {
            return;
        }
        HELD_BACK.remove();
        held.events.forEach(Runnable::run);
    }

    /** Runs {@code event} on this dispatcher's threads, after every earlier event of {@code channel}. */
    void dispatch(Channel channel, Runnable event) {
        boolean start;
        synchronized (this) {
            Lane lane = lanes.computeIfAbsent(channel, c -> new Lane());
            lane.queue.add(new Entry(event, null));
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
     * As {@link #reserve}, for an event that follows a reservation of this thread not begun yet in {@code channel} (a
     * release's {@code released} after the outcomes of its requests, which it holds back until the release has ended,
     * rules 14, 20): joined to that reservation, it is delivered right after it, on the thread that delivers it — this
     * one, unless a later event made a pool thread take it over. Queued as a reservation of its own, it would stand
     * behind one that nobody delivers yet and start a pool thread, so that {@code released} would never run on the
     * releasing application thread. Otherwise as {@link #reserve}.
     */
    Runnable reserveAfterOwn(Channel channel, Runnable event) {
        if (!onEngineThread()) {
            synchronized (this) {
                Lane lane = lanes.get(channel);
                Entry last = lane == null || lane.owned ? null : lane.queue.peekLast();
                if (last != null && !last.taken && last.owner == Thread.currentThread()) {
                    last.event = inTurn(last.event, event);
                    return () -> { };
                }
            }
        }
        return reserve(channel, event);
    }

    /** Runs {@code first}, then {@code second} whatever {@code first} threw; rethrows the first thing thrown. */
    private static Runnable inTurn(Runnable first, Runnable second) {
        return () -> {
            Throwable thrown = null;
            try {
                first.run();
            } catch (Throwable t) {
                thrown = t;
            }
            try {
                second.run();
            } catch (Throwable t) {
                if (thrown == null) {
                    thrown = t;
                } else if (thrown != t) {
                    thrown.addSuppressed(t);
                }
            }
            if (thrown instanceof Error e) {
                throw e;
            }
            if (thrown != null) {
                throw (RuntimeException) thrown;
            }
        };
    }

    /**
     * Runs {@code deliveries} ({@link #reserve}'s tasks) now, or, while this thread holds a lease's I/O lock, once it
     * lets it go ({@link #holdBack}). For the outcome of an application's request.
     */
    static void deliverOrHoldBack(List<Runnable> deliveries) {
        HeldBack held = HELD_BACK.get();
        if (held != null) {
            held.events.addAll(deliveries);
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
        Entry entry = new Entry(event, Thread.currentThread());
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
