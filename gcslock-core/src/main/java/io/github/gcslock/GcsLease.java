package io.github.gcslock;

import com.google.cloud.storage.BlobId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One acquisition held by a {@link GcsLockRegistry}. States: {@code ACTIVE} → {@code LOST} and/or
 * {@code RELEASED}. LOST is final for the lease; only a release ends it.
 *
 * <p>Health is judged twice: by the state the refresher sets, and lazily against the deadline on
 * the monotonic clock, so that a process that was paused (GC, SIGSTOP, a suspended VM) sees
 * {@link #isHealthy()} false on its first check after resuming, before any background thread ran.
 */
final class GcsLease implements Lease {

    private static final Logger log = LoggerFactory.getLogger(GcsLease.class);

    enum State { ACTIVE, LOST, RELEASED }

    private final GcsLockRegistry registry;
    private final String name;
    private final BlobId blobId;
    private final long generation;
    private final String leaseId;
    private final Instant acquiredAt;
    private final long deadlineSpanNanos;
    private final Duration ttl;
    private final List<LostListener> listeners = new CopyOnWriteArrayList<>();

    /** Serialises a refresh with the release, so a release never races an in-flight PATCH (whose metageneration it must use). */
    final ReentrantLock io = new ReentrantLock();

    private final java.util.concurrent.atomic.AtomicBoolean outerHoldReturned = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile State state = State.ACTIVE;
    private volatile boolean releasing;
    private volatile String lostReason;
    private volatile long metageneration;
    /** Monotonic time at which the last confirmed write was *sent*: the object's updated is no earlier. */
    private volatile long lastConfirmedNanos;
    private volatile Instant lastRefreshAt;
    int consecutiveFailures;
    /**
     * Refreshes sent since the last confirmed one whose outcome is unknown (a lost reply, a reply after
     * the operation timeout): refresh id → the metageneration it was guarded by and when it was sent.
     * Any of them may have committed, so a later 412 that shows one of these ids is our own write, not
     * someone else's. Touched only under {@link #io}.
     */
    final java.util.Map<String, UnconfirmedRefresh> unconfirmedRefreshes = new java.util.LinkedHashMap<>();
    volatile ScheduledFuture<?> refreshTask;
    volatile ScheduledFuture<?> deadlineTask;

    GcsLease(GcsLockRegistry registry, String name, BlobId blobId, long generation, long metageneration,
             String leaseId, Instant acquiredAt, Instant gcsUpdated, long sentNanos, Duration ttl, Duration safetyMargin) {
        this.registry = registry;
        this.name = name;
        this.blobId = blobId;
        this.generation = generation;
        this.metageneration = metageneration;
        this.leaseId = leaseId;
        this.acquiredAt = acquiredAt;
        this.lastRefreshAt = gcsUpdated;
        this.lastConfirmedNanos = sentNanos;
        this.ttl = ttl;
        this.deadlineSpanNanos = ttl.minus(safetyMargin).toNanos();
    }

    /** A refresh whose outcome is not known yet. */
    record UnconfirmedRefresh(long guardMetageneration, long sentNanos) {
    }

    // ---- Lease ----

    @Override
    public String name() {
        return name;
    }

    @Override
    public long fencingToken() {
        return generation;
    }

    @Override
    public String leaseId() {
        return leaseId;
    }

    @Override
    public Instant acquiredAt() {
        return acquiredAt;
    }

    @Override
    public Instant lastRefreshAt() {
        return lastRefreshAt;
    }

    @Override
    public Instant expiresAt() {
        return lastRefreshAt == null ? null : lastRefreshAt.plus(ttl);
    }

    @Override
    public boolean isHealthy() {
        if (state != State.ACTIVE || releasing) {
            return false;
        }
        if (registry.nanoTime() - deadlineNanos() >= 0) {
            markLost(deadlineReason());
            return false;
        }
        return true;
    }

    @Override
    public void checkHealthy() {
        if (!isHealthy()) {
            throw new LockLostException(name, generation,
                    lostReason != null ? lostReason : "the lease was released");
        }
    }

    @Override
    public Optional<String> lostReason() {
        return Optional.ofNullable(lostReason);
    }

    @Override
    public Lease onLost(LeaseLostListener listener) {
        LostListener once = new LostListener(listener);
        listeners.add(once);
        if (lostReason != null) {
            // Already lost: tell it now (on the listener threads, after the loss's own notification, which
            // may or may not have seen it in the list: hence "once").
            LockLostException ex = new LockLostException(name, generation, lostReason);
            registry.dispatch(this, () -> once.tell(this, ex));
        }
        return this;
    }

    @Override
    public void release() {
        if (outerHoldReturned.compareAndSet(false, true)) {
            registry.releaseHold(this);
        }
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", token=" + generation + ", " + state + (lostReason != null ? ": " + lostReason : "") + "]";
    }

    // ---- engine side ----

    /** Takes the outermost hold for a deferred release ({@code releaseAfter}); false if it was already given back. */
    boolean claimOuterHold() {
        return outerHoldReturned.compareAndSet(false, true);
    }

    /** Gives back one reentrant hold (not the outermost one, which {@link #release()} gives back). */
    void releaseReentrantHold() {
        registry.releaseHold(this);
    }

    BlobId blobId() {
        return blobId;
    }

    long metageneration() {
        return metageneration;
    }

    State state() {
        return state;
    }

    boolean isReleasing() {
        return releasing;
    }

    /** Marks the start of release; false if it had already started. */
    synchronized boolean beginRelease() {
        if (releasing) {
            return false;
        }
        releasing = true;
        return true;
    }

    void released() {
        state = State.RELEASED;
    }

    long deadlineNanos() {
        return lastConfirmedNanos + deadlineSpanNanos;
    }

    String deadlineReason() {
        return "no refresh was confirmed within " + Duration.ofNanos(deadlineSpanNanos)
                + " (TTL " + ttl + " minus the safety margin); another process may take the lock over soon";
    }

    /** A write of ours was confirmed by GCS: the object's updated is no earlier than {@code sentNanos}. */
    void confirmed(long newMetageneration, long sentNanos, Instant gcsUpdated) {
        this.metageneration = newMetageneration;
        this.lastConfirmedNanos = Math.max(this.lastConfirmedNanos, sentNanos);
        this.lastRefreshAt = gcsUpdated;
        this.consecutiveFailures = 0;
        this.unconfirmedRefreshes.clear(); // the object moved past every earlier refresh of ours
    }

    /** Declares the lease lost (once); tells listeners. Returns true if this call made it so. */
    boolean markLost(String reason) {
        synchronized (this) {
            if (state != State.ACTIVE) {
                return false;
            }
            state = State.LOST;
            lostReason = reason;
        }
        ScheduledFuture<?> t = refreshTask;
        if (t != null) {
            t.cancel(false);
        }
        ScheduledFuture<?> d = deadlineTask;
        if (d != null) {
            d.cancel(false);
        }
        LockLostException ex = new LockLostException(name, generation, reason);
        if (!releasing) {
            log.warn("{}", ex.getMessage());
        }
        // The transition is done; the callbacks run on the listener threads, so that the deadline timer
        // and the refresher never wait for a listener (an alert sent over HTTP) — rules 11 and 20.
        registry.notifyLost(this, ex, () -> {
            for (LostListener l : listeners) {
                l.tell(this, ex);
            }
        });
        return true;
    }

    /** A listener given to {@link #onLost}, told at most once. */
    private final class LostListener {
        private final LeaseLostListener listener;
        private final java.util.concurrent.atomic.AtomicBoolean told = new java.util.concurrent.atomic.AtomicBoolean();

        LostListener(LeaseLostListener listener) {
            this.listener = listener;
        }

        void tell(Lease lease, LockLostException ex) {
            if (!told.compareAndSet(false, true)) {
                return;
            }
            try {
                listener.leaseLost(lease, ex);
            } catch (RuntimeException e) {
                log.warn("lease-lost listener of lock '{}' threw; ignored", name, e);
            }
        }
    }
}
