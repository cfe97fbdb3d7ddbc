package io.github.gcslock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The registry's {@link LockEventListener}s, told of one event per method, each listener safely: a
 * listener's RuntimeException is logged and ignored, so one failing listener neither hides the event
 * from the others nor fails the engine's work. An {@link Error} is logged too and thrown once every
 * listener has been told: on the acquiring thread the call fails and hands back the lease it could not
 * hand out; on a listener thread the dispatcher logs it (rule 20).
 *
 * <p>Threads (rule 20): the acquisition events ({@code acquireStarted}, {@code acquired}, {@code notAcquired},
 * {@code tookOver}, {@code fencingTokenRegression}, {@code acquireFinished}) run on the acquiring thread for each
 * listener unless its earlier events of the lock are still pending (then they are queued behind them) or a later event
 * of it arrived first (then a listener thread takes them over); {@code released} and a request's outcome likewise on
 * the releasing or requesting thread — a request's only once that thread has let go of a lease's I/O lock. The refresh
 * and loss events go through the {@link LockEventDispatcher}, in order per lock and listener, and never on the
 * refresher's or the deadline timer's threads. Each registration of a listener has a queue per lock of its own (and a
 * lease's {@code onLost} listeners one of theirs), so a listener that blocks delays only its own later events.
 */
final class Listeners implements LockStore.RequestOutcomes {

    private static final Logger log = LoggerFactory.getLogger(Listeners.class);

    /**
     * One entry per registration, the key of its channels (rule 20): a listener object registered twice is two
     * registrations, each told every event once, in its own channels; sharing one, the second registration's
     * reservation queued behind the first one's not begun, so a listener thread took both over at once.
     */
    private final List<Registration> all = new CopyOnWriteArrayList<>();
    /** Runs callbacks off the refresher's and deadline timer's threads, in order per lock and listener (rule 20). */
    private final LockEventDispatcher events;
    private final LongSupplier nanoTime;
    /** Only for its {@link EngineRuntime#yieldPoint}s (a test's runtime lets other threads run there). */
    private final EngineRuntime runtime;

    Listeners(Collection<LockEventListener> initial, LongSupplier nanoTime) {
        this(initial, nanoTime, EngineRuntime.REAL);
    }

    Listeners(Collection<LockEventListener> initial, LongSupplier nanoTime, EngineRuntime runtime) {
        initial.forEach(this::add);
        this.nanoTime = nanoTime;
        this.runtime = runtime;
        this.events = new LockEventDispatcher(runtime);
    }

    void add(LockEventListener listener) {
        all.add(new Registration(Objects.requireNonNull(listener)));
    }

    /** One registration of a listener; compared by identity (a channel's key, rule 20). */
    private static final class Registration {
        final LockEventListener listener;

        Registration(LockEventListener listener) {
            this.listener = listener;
        }
    }

    // ---- on the acquiring thread, among the lock's events (rule 20)

    /**
     * First of the call's events; as {@link #acquired}: on the acquiring thread when nothing of the listener's view of
     * the lock is pending (an Error thrown there reaches the caller), else queued behind it (a previous lease's
     * {@code lost} or {@code released} still running), so that it never overlaps them.
     */
    void acquireStarted(String name, AcquireMode mode, Announced announced) {
        acquisitionEvent(announced.registrations, name, l -> l.acquireStarted(name, mode));
    }

    /**
     * The call that started at {@code startNanos} (of the registry's ticker) ended with {@code outcome}; {@code took} is
     * measured now, on the acquiring thread, wherever the event runs. Last of the call's events, as {@link #acquired}.
     * Told to the registrations the call told {@code acquireStarted} ({@code announced}), or, for a call that failed
     * before it was announced (bad input, a closed registry: null), to every listener registered now.
     */
    void acquireFinished(String name, AcquireOutcome outcome, long startNanos, Announced announced) {
        List<Registration> to = announced != null ? announced.registrations : all;
        if (to.isEmpty()) {
            return;
        }
        Duration took = Duration.ofNanos(nanoTime.getAsLong() - startNanos);
        acquisitionEvent(to, name, l -> l.acquireFinished(name, outcome, took));
    }

    /**
     * The registrations a call tells {@code acquireStarted}, taken before it tells them (rule 20): its
     * {@code acquireFinished} goes to them alone. A listener added while the call is in flight is told neither end of
     * that call (it is told the call's lease events from then on, as any listener registered then), never an
     * {@code acquireFinished} without its {@code acquireStarted}; a tracing listener pairs the two.
     */
    static final class Announced {
        private final List<Registration> registrations;

        private Announced(List<Registration> registrations) {
            this.registrations = registrations;
        }
    }

    /** The audience of a call about to tell {@code acquireStarted}: every listener registered now. */
    Announced announce() {
        return new Announced(List.copyOf(all));
    }

    /** An attempt found {@code name} held by {@code holder}; nothing when the holder is unknown (null). */
    void notAcquired(String name, LockInfo holder) {
        if (holder == null) {
            return;
        }
        acquisitionEvent(name, l -> l.notAcquired(name, holder));
    }

    /** Among the lock's events (rule 20): on the acquiring thread, or queued behind a previous lease's events. */
    void tookOver(String name, LockInfo stale) {
        acquisitionEvent(name, l -> l.tookOver(name, stale));
    }

    /**
     * The lease's first events (rule 20): {@code fencingTokenRegression} when {@code highestSeenBefore} is not null (its
     * token is below one seen before, rule 18), then {@code acquired}. For each listener both take one place among its
     * events of the lock, now, before the lease's refreshes start (the caller starts them after this), so that nothing
     * of the lease comes before them: while a listener told first blocks in {@code fencingTokenRegression}, the lease's
     * loss used to take its place between the two, and a listener thread told the next listener {@code lost} before
     * its {@code acquired}. The returned task delivers them and must be run: for each listener on the acquiring thread
     * when nothing of its view of the lock is pending (an Error thrown there reaches the caller, who then does not hold
     * the lock; the listener is told {@code acquired} all the same), else queued behind it on the listener threads (a
     * previous lease's slow "lost" listener) — the acquiring thread never waits for listeners.
     */
    Runnable acquiredQueued(Lease lease, Long highestSeenBefore) {
        if (all.isEmpty()) {
            return () -> { };
        }
        List<LockEventDispatcher.Channel> channels = new ArrayList<>();
        List<Runnable> tasks = new ArrayList<>();
        for (Registration r : all) {
            channels.add(channel(lease.name(), r));
            tasks.add(() -> handedOut(r.listener, lease, highestSeenBefore));
        }
        return events.reserveHere(channels, tasks); // one place per listener for both events
    }

    /** One listener's first events of a lease: an Error in fencingTokenRegression hides no acquired (rule 20). */
    private static void handedOut(LockEventListener listener, Lease lease, Long highestSeenBefore) {
        Error failed = null;
        if (highestSeenBefore != null) {
            try {
                tell(listener, l -> l.fencingTokenRegression(lease, highestSeenBefore));
            } catch (Error e) {
                failed = e;
            }
        }
        try {
            tell(listener, l -> l.acquired(lease));
        } catch (Error e) {
            if (failed == null) {
                failed = e;
            } else if (failed != e) {
                failed.addSuppressed(e);
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    // ---- through the dispatcher

    void refreshed(Lease lease) {
        dispatchToEach(lease.name(), l -> l.refreshed(lease));
    }

    void refreshFailed(Lease lease, Exception e) {
        dispatchToEach(lease.name(), l -> l.refreshFailed(lease, e));
    }

    /**
     * Tells the lease's own lost listeners ({@code leaseListeners}) and the registry's, on the listener threads:
     * never on the refresher or the deadline timer, which must not wait for a slow listener (rule 20), nor on a
     * caller's {@code isHealthy()} check. The lease's listeners are a channel of their own, so they wait for no
     * listener of another lease (a previous lease's slow {@code released} listener) and for no registry listener;
     * each registry listener is told after its own earlier events of the lock.
     */
    void lost(Lease lease, LockLostException reason, Runnable leaseListeners) {
        events.dispatch(leaseChannel(lease), leaseListeners);
        // Steps other threads can see: from here on the lease's onLost listeners (then each registry listener told so
        // far) may run and release the lease, whose released must still come after every listener's lost (rule 20:
        // the caller, GcsLease#markLost, holds the lease's monitor, which a release takes to begin and to end).
        runtime.yieldPoint("loss of '" + lease.name() + "': its onLost listeners handed over");
        for (Registration r : all) {
            events.dispatch(channel(lease.name(), r), () -> tell(r.listener, l -> l.lost(lease, reason)));
            runtime.yieldPoint("loss of '" + lease.name() + "': a registry listener's lost queued");
        }
    }

    /** Runs {@code event} (an {@code onLost} listener of {@code lease}) after the lease's earlier lost notification. */
    void dispatchToLeaseListeners(Lease lease, Runnable event) {
        events.dispatch(leaseChannel(lease), event);
    }

    /**
     * Queues "released" now among each listener's events of the lock, to be delivered by running the returned task:
     * on the releasing thread if it is not an engine thread, and always after that listener's earlier events of the
     * lock. A release queues it before it frees the name locally, so that the next lease's "acquired" comes after it.
     */
    Runnable releasedQueued(Lease lease) {
        if (all.isEmpty()) {
            return () -> { };
        }
        List<Runnable> deliveries = new ArrayList<>(all.size());
        for (Registration r : all) {
            // after the release's own request events, which it holds back until it has ended (rules 14, 20)
            deliveries.add(events.reserveAfterOwn(channel(lease.name(), r), () -> tell(r.listener, x -> x.released(lease))));
        }
        return () -> deliveries.forEach(Runnable::run);
    }

    // ---- request outcomes (LockStore): on the requesting thread if it is an application's, else dispatched

    /** Dispatch key of requests about no single lock (a listing, the bucket): no lock name is empty. */
    private static final String NO_LOCK = "";

    @Override
    public void completed(RequestOutcome outcome) {
        requestOutcome(outcome.name(), l -> l.requestCompleted(outcome));
    }

    /**
     * Every listener's event takes its place in that listener's channel of the lock now; on an application thread it is
     * delivered there, at once or — while that thread holds a lease's I/O lock (a renewal, a release) — once it let the
     * lock go, so that a listener blocking in it holds back no refresh of the lease (rule 20).
     */
    private void requestOutcome(String name, Consumer<LockEventListener> call) {
        if (all.isEmpty()) {
            return;
        }
        String lock = name == null ? NO_LOCK : name;
        List<Runnable> deliveries = new ArrayList<>(all.size());
        for (Registration r : all) {
            deliveries.add(events.reserve(channel(lock, r), () -> tell(r.listener, call)));
        }
        LockEventDispatcher.deliverOrHoldBack(deliveries);
    }

    // ---- one channel per registration of a listener and lock (rule 20)

    private static LockEventDispatcher.Channel channel(String name, Registration registration) {
        return new LockEventDispatcher.Channel(name == null ? NO_LOCK : name, registration);
    }

    /** The channel of a lease's own {@code onLost} listeners. */
    private static LockEventDispatcher.Channel leaseChannel(Lease lease) {
        return new LockEventDispatcher.Channel(lease.name(), lease);
    }

    /** Each listener's event on the listener threads, after that listener's earlier events of the lock. */
    private void dispatchToEach(String name, Consumer<LockEventListener> call) {
        for (Registration r : all) {
            events.dispatch(channel(name, r), () -> tell(r.listener, call));
        }
    }

    /**
     * An acquisition event: for each listener on the acquiring thread, at once, when nothing of its view of the lock is
     * pending, else queued behind its earlier events (rule 20). Every listener is told whatever another threw; the
     * first {@link Error} thrown on this thread is thrown once every listener was told or queued.
     */
    private void acquisitionEvent(String name, Consumer<LockEventListener> call) {
        acquisitionEvent(all, name, call);
    }

    /** As {@link #acquisitionEvent(String, Consumer)}, told to {@code to} (a call's audience, see {@link Announced}). */
    private void acquisitionEvent(List<Registration> to, String name, Consumer<LockEventListener> call) {
        if (to.isEmpty()) {
            return;
        }
        List<LockEventDispatcher.Channel> channels = new ArrayList<>();
        List<Runnable> tasks = new ArrayList<>();
        for (Registration r : to) {
            channels.add(channel(name, r));
            tasks.add(() -> tell(r.listener, call));
        }
        events.runHereOrQueue(channels, tasks);
    }

    /** Tells one listener: a RuntimeException is logged and ignored; an {@link Error} is logged and thrown. */
    private static void tell(LockEventListener listener, Consumer<LockEventListener> call) {
        try {
            call.accept(listener);
        } catch (RuntimeException e) {
            log.warn("a LockEventListener threw; ignored", e);
        } catch (Error e) {
            log.warn("a LockEventListener threw {}; the other listeners are told all the same", e.toString());
            log.debug("the listener's error", e);
            throw e;
        }
    }
}
