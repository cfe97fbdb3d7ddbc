package io.github.gcslock.spring;

import io.github.gcslock.AcquireMode;
import io.github.gcslock.AcquireOutcome;
import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockLostException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Micrometer Observations of the lock registry: one {@code gcslock.acquisition} per acquire call (its
 * duration is the wait; outcome {@code acquired}, {@code busy}, {@code timeout} or {@code error}; mode
 * {@code try} or {@code wait}) and one {@code gcslock.hold} per lease (from acquisition until it is
 * released or lost; a lost hold also carries the {@link LockLostException} as its error). With Boot's
 * ObservationRegistry these become timers (and spans with a tracer); see
 * {@link GcsLockObservationConventions} for the key values. Reentrant holds are not acquisitions and are
 * not observed.
 *
 * <p>Observations are not put in scope: the engine reports on its own threads too, and an acquisition
 * ends before the caller's work starts. An observation that is current on the calling thread when the
 * acquisition starts becomes its parent.
 */
public class GcsLockObservationListener implements LockEventListener {

    private final ObservationRegistry registry;
    private final ObservationConvention<GcsLockAcquireContext> acquireConvention;
    private final ObservationConvention<GcsLockHoldContext> holdConvention;
    private static final ObservationConvention<GcsLockAcquireContext> DEFAULT_ACQUIRE = new GcsLockObservationConventions.Acquire();
    private static final ObservationConvention<GcsLockHoldContext> DEFAULT_HOLD = new GcsLockObservationConventions.Hold();

    /**
     * Acquisitions under way, per lock name, oldest first. The engine reports the start and the end of one
     * acquisition on the calling thread, so the end is matched to the start of the same thread; if none
     * is found (a listener dispatch that moved threads), the oldest start of that name is taken.
     */
    private final Map<String, Deque<Pending>> acquiring = new ConcurrentHashMap<>();
    /** Holds under way, by lease identity. */
    private final Map<Lease, Holding> holding = new ConcurrentHashMap<>();

    private record Holding(Observation observation, GcsLockHoldContext context) {
    }

    private record Pending(Thread thread, Observation observation, GcsLockAcquireContext context) {
    }

    public GcsLockObservationListener(ObservationRegistry registry) {
        this(registry, null, null);
    }

    /** With custom conventions (null: the defaults of {@link GcsLockObservationConventions}). */
    public GcsLockObservationListener(ObservationRegistry registry, ObservationConvention<GcsLockAcquireContext> acquireConvention,
                                      ObservationConvention<GcsLockHoldContext> holdConvention) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.acquireConvention = acquireConvention;
        this.holdConvention = holdConvention;
    }

    @Override
    public void acquireStarted(String name, AcquireMode mode) {
        GcsLockAcquireContext context = new GcsLockAcquireContext(name, mode.label());
        Observation observation = Observation.createNotStarted(acquireConvention, DEFAULT_ACQUIRE, () -> context, registry).start();
        Pending pending = new Pending(Thread.currentThread(), observation, context);
        acquiring.compute(name, (n, queue) -> {
            Deque<Pending> q = queue != null ? queue : new ArrayDeque<>();
            q.addLast(pending);
            return q;
        });
    }

    @Override
    public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
        Pending pending = takePending(name);
        if (pending == null) {
            // Failed before it started asking (bad input, closed registry): an observation of no wait.
            GcsLockAcquireContext context = new GcsLockAcquireContext(name, "unknown");
            context.setOutcome(outcome.label());
            Observation.createNotStarted(acquireConvention, DEFAULT_ACQUIRE, () -> context, registry).start().stop();
            return;
        }
        pending.context().setOutcome(outcome.label());
        pending.observation().stop();
    }

    private Pending takePending(String name) {
        Pending[] taken = new Pending[1];
        // compute/computeIfPresent run atomically per name, so a start and an end of the same name never
        // interleave with the removal of an emptied queue (names do not accumulate).
        acquiring.computeIfPresent(name, (n, queue) -> {
            for (Iterator<Pending> it = queue.iterator(); it.hasNext(); ) {
                Pending p = it.next();
                if (p.thread() == Thread.currentThread()) {
                    taken[0] = p;
                    it.remove();
                    break;
                }
            }
            if (taken[0] == null) {
                taken[0] = queue.pollFirst();
            }
            return queue.isEmpty() ? null : queue;
        });
        return taken[0];
    }

    @Override
    public void acquired(Lease lease) {
        GcsLockHoldContext context = new GcsLockHoldContext(lease);
        holding.put(lease, new Holding(Observation.createNotStarted(holdConvention, DEFAULT_HOLD, () -> context, registry).start(), context));
    }

    @Override
    public void lost(Lease lease, LockLostException reason) {
        Holding h = holding.remove(lease);
        if (h != null) {
            h.context().setOutcome("lost");
            h.observation().error(reason);
            h.observation().stop();
        }
    }

    @Override
    public void released(Lease lease) {
        Holding h = holding.remove(lease);
        if (h != null) {
            h.context().setOutcome("released");
            h.observation().stop();
        }
    }
}
