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
    /** The timing in force: its TTL and deadline span judge this lease's health (DESIGN.md rule 11). */
    private volatile LeaseTiming timing;
    /** The timing refreshes write (the TTL stored in the object); differs from {@link #timing} until a renewal is confirmed. */
    private volatile LeaseTiming target;
    /**
     * While a refresh that shortens the TTL is unconfirmed, the object may already carry the shorter TTL
     * (the write committed, its reply was lost), so others may judge it stale by that: the deadline is capped
     * at that refresh's send time plus the shorter span. Cleared by the next confirmed refresh. Guarded by io.
     */
    private volatile boolean deadlineCapped;
    private volatile long deadlineCapNanos;
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
    /** Bumped by a renewal, which refreshes at once and starts a new schedule: an older scheduled refresh then ends its chain. */
    final java.util.concurrent.atomic.AtomicInteger refreshChain = new java.util.concurrent.atomic.AtomicInteger();
    volatile ScheduledFuture<?> deadlineTask;

    GcsLease(GcsLockRegistry registry, String name, BlobId blobId, long generation, long metageneration,
             String leaseId, Instant acquiredAt, Instant gcsUpdated, long sentNanos, LeaseTiming timing) {
        this.registry = registry;
        this.name = name;
        this.blobId = blobId;
        this.generation = generation;
        this.metageneration = metageneration;
        this.leaseId = leaseId;
        this.acquiredAt = acquiredAt;
        this.lastRefreshAt = gcsUpdated;
        this.lastConfirmedNanos = sentNanos;
        this.timing = timing;
        this.target = timing;
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
        return lastRefreshAt == null ? null : lastRefreshAt.plus(timing.ttl());
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
            registry.listeners().dispatch(name, () -> once.tell(this, ex));
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

    LeaseTiming timing() {
        return timing;
    }

    /** The timing the next refreshes write. */
    LeaseTiming target() {
        return target;
    }

    /** From now on refreshes write {@code next} (a renewal); it is in force once one of them is confirmed. */
    void retarget(LeaseTiming next) {
        this.target = next;
    }

    /**
     * A refresh carrying {@code sent} goes out at {@code sentNanos}. If it shortens the deadline span, others
     * may judge the object by the shorter TTL as soon as it commits (maybe without our hearing of it), so
     * the deadline is capped at the send time plus the shorter span until a later refresh is confirmed.
     * True if this moved the deadline closer (the deadline timer must be re-armed).
     */
    boolean sending(LeaseTiming sent, long sentNanos) {
        if (sent.deadlineSpanNanos() < timing.deadlineSpanNanos()) {
            long cap = sentNanos + sent.deadlineSpanNanos();
            if (!deadlineCapped || cap - deadlineCapNanos < 0) {
                deadlineCapNanos = cap;
                deadlineCapped = true;
                return true;
            }
        }
        return false;
    }

    /** A refresh carrying {@code sent} was confirmed: the object holds its TTL, so it is the one in force. */
    void timingConfirmed(LeaseTiming sent) {
        this.timing = sent;
        this.deadlineCapped = false;
    }

    long deadlineNanos() {
        long byTtl = lastConfirmedNanos + timing.deadlineSpanNanos();
        long cap = deadlineCapNanos;
        return deadlineCapped && cap - byTtl < 0 ? cap : byTtl;
    }

    String deadlineReason() {
        LeaseTiming t = timing;
        return "no refresh was confirmed within " + Duration.ofNanos(t.deadlineSpanNanos())
                + " (TTL " + t.ttl() + " minus the safety margin); another process may take the lock over soon";
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
        registry.listeners().lost(this, ex, () -> {
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
