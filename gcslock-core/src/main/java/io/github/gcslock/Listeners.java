package io.github.gcslock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/**
 * The registry's {@link LockEventListener}s, told of one event per method, each listener safely: a
 * listener's RuntimeException is logged and ignored, so one failing listener neither hides the event
 * from the others nor fails the engine's work. An {@link Error} is logged too and thrown once every
 * listener has been told: on the acquiring thread the call fails and hands back the lease it could not
 * hand out; on a listener thread the dispatcher logs it (rule 20).
 *
 * <p>Threads (rule 20): {@code acquireStarted} and {@code acquireFinished} run on the acquiring thread;
 * the other acquisition events ({@code acquired}, {@code notAcquired}, {@code tookOver},
 * {@code fencingTokenRegression}) run there too unless earlier events of the lock are still pending, in which
 * case they are queued behind them; the refresh, loss and release events go through the
 * {@link LockEventDispatcher}, in order per lock and never on the refresher's or the deadline timer's threads.
 */
final class Listeners implements LockStore.RequestOutcomes {

    private static final Logger log = LoggerFactory.getLogger(Listeners.class);

    private final List<LockEventListener> all = new CopyOnWriteArrayList<>();
    /** Runs callbacks off the refresher's and deadline timer's threads, in order per lock (rule 20). */
    private final LockEventDispatcher events;
    private final LongSupplier nanoTime;

    Listeners(Collection<LockEventListener> initial, LongSupplier nanoTime) {
        this(initial, nanoTime, EngineRuntime.REAL);
    }

    Listeners(Collection<LockEventListener> initial, LongSupplier nanoTime, EngineRuntime runtime) {
        this.all.addAll(initial);
        this.nanoTime = nanoTime;
        this.events = new LockEventDispatcher(runtime);
    }

    void add(LockEventListener listener) {
        all.add(Objects.requireNonNull(listener));
    }

    // ---- on the acquiring thread

    void acquireStarted(String name, AcquireMode mode) {
        each(l -> l.acquireStarted(name, mode));
    }

    /** The call that started at {@code startNanos} (of the registry's ticker) ended with {@code outcome}. */
    void acquireFinished(String name, AcquireOutcome outcome, long startNanos) {
        if (all.isEmpty()) {
            return;
        }
        Duration took = Duration.ofNanos(nanoTime.getAsLong() - startNanos);
        each(l -> l.acquireFinished(name, outcome, took));
    }

    /** An attempt found {@code name} held by {@code holder}; nothing when the holder is unknown (null). */
    void notAcquired(String name, LockInfo holder) {
        if (holder == null) {
            return;
        }
        events.runHereOrQueue(name, () -> {
            each(l -> l.notAcquired(name, holder));
        });
    }

    /** Among the lock's events (rule 20): on the acquiring thread, or queued behind a previous lease's events. */
    void tookOver(String name, LockInfo stale) {
        events.runHereOrQueue(name, () -> {
            each(l -> l.tookOver(name, stale));
        });
    }

    /** Among the lock's events, before the lease's "acquired" (rule 20), as {@link #acquired}. */
    void fencingTokenRegression(Lease lease, long highestSeenBefore) {
        events.runHereOrQueue(lease.name(), () -> {
            each(l -> l.fencingTokenRegression(lease, highestSeenBefore));
        });
    }

    /**
     * First among the lease's events (rule 20): its refreshes, already scheduled, queue behind this. On the
     * acquiring thread when nothing of the lock is pending (an Error thrown there reaches the caller, who then
     * does not hold the lock); when a previous lease's events are still pending or running (a slow "lost"
     * listener), queued behind them on the listener threads — the acquiring thread never waits for listeners,
     * and a failure there is logged like any listener's.
     */
    void acquired(Lease lease) {
        events.runHereOrQueue(lease.name(), () -> {
            each(l -> l.acquired(lease));
        });
    }

    // ---- through the dispatcher

    void refreshed(Lease lease) {
        events.dispatch(lease.name(), () -> {
            each(l -> l.refreshed(lease));
        });
    }

    void refreshFailed(Lease lease, Exception e) {
        events.dispatch(lease.name(), () -> {
            each(l -> l.refreshFailed(lease, e));
        });
    }

    /**
     * Tells the lease's own lost listeners ({@code leaseListeners}) and then the registry's, on the
     * listener threads: never on the refresher or the deadline timer, which must not wait for a slow
     * listener (rule 20), nor on a caller's {@code isHealthy()} check.
     */
    void lost(Lease lease, LockLostException reason, Runnable leaseListeners) {
        events.dispatch(lease.name(), () -> {
            leaseListeners.run();
            each(l -> l.lost(lease, reason));
        });
    }

    /**
     * Queues "released" now among the lock's events, to be delivered by running the returned task: on the
     * releasing thread if it is not an engine thread, and always after the lock's earlier events. A release
     * queues it before it frees the name locally, so that the next lease's "acquired" comes after it.
     */
    Runnable releasedQueued(Lease lease) {
        return events.queueToRunHere(lease.name(), () -> {
            each(l -> l.released(lease));
        });
    }

    // ---- request outcomes (LockStore): on the requesting thread if it is an application's, else dispatched

    /** Dispatch key of requests about no single lock (a listing, the bucket): no lock name is empty. */
    private static final String NO_LOCK = "";

    @Override
    public void answered(String name) {
        if (all.isEmpty()) {
            return;
        }
        events.dispatchOrRunHere(name == null ? NO_LOCK : name, () -> {
            each(l -> l.requestAnswered(name));
        });
    }

    @Override
    public void failed(String name, GcsLockException error) {
        if (all.isEmpty()) {
            return;
        }
        events.dispatchOrRunHere(name == null ? NO_LOCK : name, () -> {
            each(l -> l.requestFailed(name, error));
        });
    }

    /** Runs {@code event} on the listener threads after the earlier events of lock {@code name}. */
    void dispatch(String name, Runnable event) {
        events.dispatch(name, event);
    }

    /**
     * Tells every listener, whatever another one threw (rule 20): a RuntimeException is logged and ignored; an
     * {@link Error} is logged too and, once every listener has been told, the first one is thrown — to the thread
     * that ran the event: the acquiring thread (whose call fails, its lease handed back) or a listener thread (which
     * logs it). One failing listener never hides an event from the others.
     */
    private void each(java.util.function.Consumer<LockEventListener> call) {
        Error first = null;
        for (LockEventListener l : all) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                log.warn("a LockEventListener threw; ignored", e);
            } catch (Error e) {
                log.warn("a LockEventListener threw {}; the other listeners are told all the same", e.toString());
                log.debug("the listener's error", e);
                if (first == null) {
                    first = e;
                } else if (first != e) {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
