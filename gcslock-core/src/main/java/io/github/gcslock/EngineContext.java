package io.github.gcslock;

import com.google.cloud.storage.Blob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * What every engine part may ask, whatever lease it works for: the monotonic clock and GCS time as well as
 * this process can tell (rule 6), whether an object was written by this process, the timing of an
 * acquisition and the store whose calls fit it (rules 11, 15), and the listeners. It is the
 * {@link LeaseKeeper}'s view of the engine.
 */
final class EngineContext implements LeaseKeeper.Engine {

    private static final Logger log = LoggerFactory.getLogger(EngineContext.class);

    /** Every GCS request; a lease with a TTL shorter than the registry's gets a tighter bound ({@link #storeFor}). */
    private final LockStore store;
    /** The registry's bound on one GCS call (rule 15). */
    private final Duration operationTimeout;
    private final Duration ttl;
    private final int maxRefreshFailures;
    /** GCS's one write per second to one object (rule 21): per-lease TTLs are checked against it. */
    private final Duration writeRateWindow;
    /** The timing of acquisitions without a TTL of their own: the registry's settings. */
    private final LeaseTiming defaultTiming;
    private final Clock clock;
    private final LongSupplier nanoTime;
    private final ProcessIdentity me;
    private final Listeners listeners;
    /** Acquisition TTLs already warned about as refreshing faster than GCS's write limit (one line each). */
    private final Set<Duration> shortTtlsWarned = ConcurrentHashMap.newKeySet();

    EngineContext(LockSettings settings, LockStore store, Clock clock, LongSupplier nanoTime, ProcessIdentity me,
                  Listeners listeners) {
        this.store = store;
        this.operationTimeout = settings.operationTimeout();
        this.ttl = settings.ttl();
        this.maxRefreshFailures = settings.maxRefreshFailures();
        this.writeRateWindow = settings.writeRateWindow();
        this.defaultTiming = new LeaseTiming(ttl, settings.refreshInterval(), settings.safetyMargin());
        this.clock = clock;
        this.nanoTime = nanoTime;
        this.me = me;
        this.listeners = listeners;
    }

    /** The registry's timing, or one derived from an acquisition's own TTL (validated). */
    LeaseTiming timingFor(String name, Duration ttl) {
        if (ttl == null || ttl.equals(this.ttl)) {
            return defaultTiming;
        }
        LeaseTiming timing = LeaseTiming.derive(name, ttl, maxRefreshFailures, writeRateWindow, operationTimeout);
        if (writeRateWindow.multipliedBy(maxRefreshFailures).toNanos() >= timing.deadlineSpanNanos() && shortTtlsWarned.add(ttl)) {
            // Rule 21: refreshes are at least a write window apart, so fewer than maxRefreshFailures fit before the
            // deadline; the deadline (rule 11) still loses the lease in time, it is only less tolerant of failures.
            log.warn("lock '{}' acquired with TTL {}: its refreshes are at least writeRateWindow ({}) apart, so fewer than "
                    + "maxRefreshFailures ({}) fit before its deadline ({}); one or two failed refreshes lose it", name, ttl,
                    writeRateWindow, maxRefreshFailures, Duration.ofNanos(timing.deadlineSpanNanos()));
        }
        return timing;
    }

    /** The timing of acquisitions without a TTL of their own. */
    LeaseTiming defaultTiming() {
        return defaultTiming;
    }

    /**
     * The store for calls made for a lease of {@code timing} (rule 15): each call must fail well before the
     * lease's deadline so that the next refresh can still run, so a lease whose TTL is shorter than the
     * registry's gets calls bounded by TTL/3 (the registry's own default rule) instead of the registry's
     * operation timeout — a 10 s timeout would outlast a 2 s lease's whole deadline.
     */
    @Override
    public LockStore storeFor(LeaseTiming timing) {
        Duration bound = callBound(timing);
        return bound.compareTo(operationTimeout) < 0 ? store.boundedTo(bound) : store;
    }

    @Override
    public Duration callBound(LeaseTiming timing) {
        return LeaseTiming.callBound(timing.ttl(), operationTimeout);
    }

    @Override
    public long nanoTime() {
        return nanoTime.getAsLong();
    }

    /** GCS time as well as we can tell: the proven lower bound once we have seen a reply, else our clock. */
    @Override
    public Instant estimatedGcsNow() {
        Instant bound = store.gcsTime().lowerBoundNow();
        return bound != null ? bound : clock.instant();
    }

    /** The proven lower bound of GCS time, or null before any reply. */
    Instant estimatedGcsNowOrNull() {
        return store.gcsTime().lowerBoundNow();
    }

    @Override
    public boolean isOurs(Blob object, String leaseId) {
        return me.isOurs(object, leaseId);
    }

    @Override
    public Listeners listeners() {
        return listeners;
    }
}
