package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.LockOwner;
import io.github.gcslock.LockRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Takes the lock of one {@link GcsLocked} call as its {@link IfLocked} mode says, and says so:
 * <ul>
 * <li>{@code SKIP}: takes the lock if it is free (waiting up to {@code maxWait}, else {@code gcslock.wait});
 * held elsewhere, the call is skipped: an INFO line the first time per method (DEBUG after), a
 * {@link GcsLockSkippedEvent}, outcome {@code skipped}.</li>
 * <li>{@code FAIL}: the same wait; held elsewhere, {@link LockNotAcquiredException} (outcome {@code refused}).</li>
 * <li>{@code WAIT}: waits up to {@code maxWait}, else without limit; then {@link LockNotAcquiredException}
 * (outcome {@code timeout}).</li>
 * </ul>
 * When GCS could not be asked it is unknown whether the lock is free, so the method must not run in any
 * mode: the failure is thrown, except that a {@code SKIP} call is skipped with one WARN line (a scheduled
 * job's next run will try again); either way {@link GcsReachability} has it from the registry's request events. An interrupt while
 * waiting becomes {@link GcsLockInterruptedException} (outcome {@code interrupted}). Every call's outcome is
 * told to the {@link GcsLockedAcquireListener}s (the {@code gcslock.acquire} meter).
 */
final class IfLockedPolicy {

    /** The interceptor's category: what users configure to see or silence these lines. */
    private static final Logger log = LoggerFactory.getLogger(GcsLockedInterceptor.class);
    private static final Duration NO_LIMIT = Duration.ofDays(365 * 100L);

    private final Supplier<Duration> defaultWait;
    private final Object eventSource;
    private final ApplicationEventPublisher events;
    private final ObjectProvider<GcsLockedAcquireListener> acquireListeners;
    private final Set<Method> skippedOnce = ConcurrentHashMap.newKeySet();
    private final PendingReleases pendingReleases = new PendingReleases();
    private volatile ObjectProvider<GcsReachability> reachability;
    /** The waits in progress, which closing the context ends (null: none tracked). */
    private volatile ObjectProvider<GcsLockedWaits> waits;

    /**
     * @param defaultWait      {@code gcslock.wait}: the wait of SKIP and FAIL methods without a {@code maxWait}
     * @param eventSource      the source of the {@link GcsLockSkippedEvent}s
     * @param acquireListeners looked up on each call; may be null
     */
    IfLockedPolicy(Supplier<Duration> defaultWait, Object eventSource, ApplicationEventPublisher events,
                   ObjectProvider<GcsLockedAcquireListener> acquireListeners) {
        this.defaultWait = defaultWait;
        this.eventSource = eventSource;
        this.events = events;
        this.acquireListeners = acquireListeners;
    }

    void setReachability(ObjectProvider<GcsReachability> reachability) {
        this.reachability = reachability;
    }

    void setWaits(ObjectProvider<GcsLockedWaits> waits) {
        this.waits = waits;
    }

    /** The releases of cancelled subscriptions in flight, which a call of the same name waits for first. */
    PendingReleases pendingReleases() {
        return pendingReleases;
    }

    /**
     * Takes the lock as the mode says; null when the call is skipped (held elsewhere, or GCS could not be asked
     * in SKIP mode), after logging and publishing that. Throws for FAIL, a WAIT that ran out, or an outage.
     *
     * @param owner     who the hold belongs to: an invocation (a method whose work finishes on another thread), or
     *                  null for the calling thread
     * @param reentrant whether {@code owner} holds the name already (a nested call): it re-enters that hold at once,
     *                  so it neither waits for releases in flight nor counts as a wait that closing the context ends
     */
    Lease acquireOrSkip(LockRegistry locks, String name, LockedMethod spec, LockOwner owner, boolean reentrant) {
        return acquireOrSkip(locks, name, spec, owner, reentrant, null);
    }

    /**
     * As {@link #acquireOrSkip(LockRegistry, String, LockedMethod, LockOwner, boolean)}, for a publisher whose
     * acquisition runs on another thread than the one that subscribed it.
     *
     * @param madeInside the thread that made (subscribed) this call if it ran inside a hold of {@code name} then (the
     *                   method's own code of a subscription of the name), else null: a release pending for that
     *                   subscription is not waited for while that thread blocks (see {@link PendingReleases})
     */
    Lease acquireOrSkip(LockRegistry locks, String name, LockedMethod spec, LockOwner owner, boolean reentrant,
                        Thread madeInside) {
        Lease lease;
        try {
            lease = acquireReporting(locks, name, spec, owner, reentrant, madeInside);
        } catch (GcsLockedWaits.ClosedWhileWaiting e) {
            // Shutdown, not a failure: one line, and the scheduler's thread is free at once.
            log.info("@GcsLocked {} did not run: the application is shutting down, so it stopped waiting for lock '{}'",
                    LockNameResolver.describe(spec.method()), name);
            return null;
        } catch (GcsLockException e) {
            if (e instanceof GcsLockInterruptedException) {
                throw e; // not an outage: the caller's thread is being stopped
            }
            if (e instanceof LockNotAcquiredException && e.getCause() == null) {
                throw e; // held elsewhere (FAIL, or WAIT ran out): the caller asked for the exception
            }
            // GCS could not be asked (or, nested, the enclosing lease is lost): the method must not run. The
            // outage itself is recorded by GcsReachability from the registry's request events, where every path
            // reports; here it is only read for the log line (a lost lease is no outage and adds nothing).
            GcsReachability tracker = tracker();
            if (tracker != null && !(locks instanceof GcsLockRegistry)) {
                tracker.failed(e); // another LockRegistry sends no request events: this failure is all the health hears
            }
            GcsReachability.Outage outage = tracker != null ? tracker.outage().orElse(null) : null;
            if (spec.ifLocked() != IfLocked.SKIP) {
                throw e;
            }
            // One line per failed run instead of the scheduler's ERROR with the whole cause chain.
            log.warn("@GcsLocked {} did not run: {}{}", LockNameResolver.describe(spec.method()), GcsReachability.describe(e),
                    outage == null ? "" : " [GCS calls failing since " + outage.since() + ", " + outage.failures() + " failure(s)]");
            log.debug("@GcsLocked {}: lock '{}' could not be asked for", LockNameResolver.describe(spec.method()), name, e);
            return null;
        }
        if (lease == null) {
            // Who holds it, from this registry's own leases (local state, no request): a job that skips because
            // another thread of the same process holds the lock is a different finding from another instance.
            String holder = locks.heldLeases().stream().anyMatch(l -> l.name().equals(name))
                    ? "another thread or call of this process" : "another instance";
            if (skippedOnce.add(spec.method())) {
                log.info("@GcsLocked {}: lock '{}' is held by {}, so this run is skipped (logged once per method; "
                        + "later skips at DEBUG, counted by the gcslock.acquire meter, outcome=skipped)",
                        LockNameResolver.describe(spec.method()), name, holder);
            } else {
                log.debug("@GcsLocked {}: lock '{}' is held by {}, skipped", LockNameResolver.describe(spec.method()), name, holder);
            }
            publishSkipped(name, spec.method());
            return null;
        }
        return lease;
    }

    private GcsReachability tracker() {
        ObjectProvider<GcsReachability> provider = reachability;
        return provider != null ? provider.getIfAvailable() : null;
    }

    /**
     * Acquires as the mode says and tells the acquire listeners the outcome in the mode's terms. An
     * interrupt while waiting becomes {@link GcsLockInterruptedException} with the flag set again: the
     * annotated method does not declare {@code InterruptedException}, so rethrowing it would reach the
     * caller as an {@code UndeclaredThrowableException} and lose the interrupt.
     */
    private Lease acquireReporting(LockRegistry locks, String name, LockedMethod spec, LockOwner owner, boolean reentrant,
                                   Thread madeInside) {
        List<GcsLockedAcquireListener> listeners = acquireListeners == null ? List.of()
                : acquireListeners.orderedStream().toList();
        for (GcsLockedAcquireListener l : listeners) {
            tell(() -> l.acquiring(name));
        }
        long start = System.nanoTime();
        String outcome = "error";
        try {
            Lease lease = acquire(locks, name, spec, owner, reentrant, madeInside);
            outcome = lease != null ? "acquired" : "skipped";
            return lease;
        } catch (LockNotAcquiredException e) {
            if (e.getCause() == null) {
                outcome = spec.ifLocked() == IfLocked.WAIT ? "timeout" : "refused";
            }
            throw e;
        } catch (GcsLockedWaits.ClosedWhileWaiting e) {
            outcome = "interrupted";
            throw e;
        } catch (InterruptedException e) {
            outcome = "interrupted";
            Thread.currentThread().interrupt();
            throw new GcsLockInterruptedException(name, spec.method(), e);
        } finally {
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            for (GcsLockedAcquireListener l : listeners) {
                String o = outcome;
                tell(() -> l.acquireFinished(name, spec.ifLocked(), o, took));
            }
        }
    }

    /** The registry call of each mode, for {@code owner} (null: the thread): null when SKIP finds the lock held elsewhere. */
    private Lease acquire(LockRegistry locks, String name, LockedMethod spec, LockOwner owner, boolean reentrant,
                          Thread madeInside) throws InterruptedException {
        // A release that a cancelled call of this process left running must not make this call skip or fail
        // (not waited for inside a hold of the name: a nested call re-enters or is refused, never by a release; nor,
        // for a publisher subscribed in a subscription's own code, that subscription's release while that code
        // blocks: it cannot begin before that code returns).
        if (!reentrant && !GcsLocks.inside(name)) {
            pendingReleases.awaitReleases(locks, name, madeInside);
        }
        if (reentrant) {
            // Re-enters its owner's hold at once (no request, no wait), in every mode: so it runs also once the
            // context is closing, as the enclosing hold's method goes on running. (Not re-entered — its enclosing
            // hold ended meanwhile — it goes on as any call of the mode.)
            Optional<Lease> held = tryAcquire(locks, name, owner);
            if (held.isPresent()) {
                return held.get();
            }
        }
        if (spec.ifLocked() == IfLocked.WAIT) {
            return acquire(locks, name, spec.maxWait() != null ? spec.maxWait() : NO_LIMIT, owner);
        }
        Duration wait = spec.maxWait() != null ? spec.maxWait() : defaultWait.get();
        if (spec.ifLocked() == IfLocked.FAIL) {
            if (wait.isZero()) {
                Optional<Lease> lease = tryAcquire(locks, name, owner);
                if (lease.isEmpty()) {
                    throw new LockNotAcquiredException(name, wait, locks.inspect(name).orElse(null), null);
                }
                return lease.get();
            }
            return acquire(locks, name, wait, owner);
        }
        // SKIP
        if (wait.isZero()) {
            return tryAcquire(locks, name, owner).orElse(null);
        }
        try {
            return acquire(locks, name, wait, owner);
        } catch (LockNotAcquiredException e) {
            if (e.getCause() != null) {
                throw e; // GCS errors are not "held elsewhere": reported by acquireOrSkip, never skipped silently
            }
            return null;
        }
    }

    private static Optional<Lease> tryAcquire(LockRegistry locks, String name, LockOwner owner) {
        return owner == null ? locks.tryAcquire(name) : locks.tryAcquire(name, null, owner);
    }

    /** A wait for the lock; one that closing the application context ends ({@link GcsLockedWaits}). */
    private Lease acquire(LockRegistry locks, String name, Duration wait, LockOwner owner) throws InterruptedException {
        ObjectProvider<GcsLockedWaits> provider = waits;
        GcsLockedWaits tracked = provider != null ? provider.getIfAvailable() : null;
        if (tracked == null || wait.isZero()) {
            return owner == null ? locks.acquire(name, wait) : locks.acquire(name, wait, null, owner);
        }
        return tracked.await(() -> owner == null ? locks.acquire(name, wait) : locks.acquire(name, wait, null, owner));
    }

    /**
     * Publishes {@link GcsLockSkippedEvent}. A listener's exception is logged, as for the other gcslock
     * events, not thrown into the caller: the call was skipped, and a failing alert must not turn that
     * into an error of the scheduled job.
     */
    private void publishSkipped(String name, Method method) {
        try {
            events.publishEvent(new GcsLockSkippedEvent(eventSource, name, method));
        } catch (RuntimeException e) {
            log.warn("lock '{}': a GcsLockSkippedEvent listener threw; ignored: {}", name, e.toString());
            log.debug("GcsLockSkippedEvent listener failure", e);
        }
    }

    private static void tell(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("a GcsLockedAcquireListener threw; ignored: {}", e.toString());
            log.debug("GcsLockedAcquireListener failure", e);
        }
    }
}
