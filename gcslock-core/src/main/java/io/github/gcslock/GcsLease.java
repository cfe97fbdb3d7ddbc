package io.github.gcslock;

import com.google.cloud.storage.BlobId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One acquisition held by this process. States: {@code ACTIVE} → {@code LOST} and/or {@code RELEASED}.
 * LOST is final for the lease; only a release ends it. The {@link LeaseKeeper} refreshes it and arms its
 * deadline through the methods of the "engine side" below; no other class changes its state.
 *
 * <p>Health is judged twice: by the state the refresher sets, and lazily against the deadline on
 * the monotonic clock, so that a process that was paused (GC, SIGSTOP, a suspended VM) sees
 * {@link #isHealthy()} false on its first check after resuming, before any background thread ran.
 */
final class GcsLease implements Lease {

    private static final Logger log = LoggerFactory.getLogger(GcsLease.class);

    enum State { ACTIVE, LOST, RELEASED }

    /** What a lease needs from the engine that handed it out. */
    interface Engine {
        /** The registry's monotonic clock, in nanoseconds. */
        long nanoTime();

        Listeners listeners();

        /** Gives back one hold of {@code lease}; giving back its last hold releases it. */
        void releaseHold(GcsLease lease);

        /** Returns once a release of {@code lease} in flight on another thread has ended (bounded); at once if none is. */
        void awaitReleaseInFlight(GcsLease lease);
    }

    private final Engine engine;
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
     * at that refresh's send time plus the shorter span. Cleared by the next confirmed refresh. Guarded by the I/O lock.
     */
    private volatile boolean deadlineCapped;
    private volatile long deadlineCapNanos;
    /** The shorter timing behind the cap. */
    private volatile LeaseTiming deadlineCapTiming;
    private final List<LostListener> listeners = new CopyOnWriteArrayList<>();

    /**
     * Serialises a refresh with the release, so a release never races an in-flight PATCH (whose metageneration it must
     * use). Taken through {@link #lockIo()}.
     */
    private final ReentrantLock io = new ReentrantLock();

    private final AtomicBoolean outerHoldReturned = new AtomicBoolean();
    /**
     * Counted down once the call that gave the outermost hold back has begun the release, or found that none is to
     * begin here (other holds of the name left, a hold-at-least delay): a release() that came second waits for it
     * before it looks whether a release is in flight (rule 12).
     */
    private final java.util.concurrent.CountDownLatch outerHoldSettled = new java.util.concurrent.CountDownLatch(1);
    /** The thread whose release() gave the outermost hold back (null: none, or releaseAfter). */
    private volatile Thread outerHoldGivenBackBy;
    private volatile State state = State.ACTIVE;
    private volatile boolean releasing;
    /** The thread whose release of this lease began (rule 14: it cannot wait for its own release). */
    private volatile Thread releasingThread;
    /** Counted down when the release that began has deleted the object (or given up) and freed the name here. */
    private final CountDownLatch releaseEnded = new CountDownLatch(1);
    private volatile String lostReason;
    private volatile long metageneration;
    /** Monotonic time at which the last confirmed write was *sent*: the object's updated is no earlier. */
    private volatile long lastConfirmedNanos;
    /**
     * Monotonic time of this process's last write to the object (the create, a refresh, a renewal, the release):
     * its send, moved on to the end of its call when the call returns — answered or not, the write may have
     * committed at any moment in between. No next write is sent within the write window of it (DESIGN.md rule 21).
     */
    private volatile long lastWriteNanos;
    private volatile Instant lastRefreshAt;
    /** Failed refreshes since the last confirmed one. Touched only under the I/O lock. */
    private int consecutiveFailures;
    /** Refreshes sent since the last confirmed one whose outcome is unknown (rule 8). Touched only under the I/O lock. */
    private final UnconfirmedRefreshes unconfirmedRefreshes = new UnconfirmedRefreshes();
    private volatile ScheduledFuture<?> refreshTask;
    /** Bumped by a renewal, which refreshes at once and starts a new schedule: an older scheduled refresh then ends its chain. */
    private final AtomicInteger refreshChain = new AtomicInteger();
    private volatile ScheduledFuture<?> deadlineTask;

    GcsLease(Engine engine, String name, BlobId blobId, long generation, long metageneration,
             String leaseId, Instant acquiredAt, Instant gcsUpdated, long sentNanos, LeaseTiming timing) {
        this.engine = engine;
        this.name = name;
        this.blobId = blobId;
        this.generation = generation;
        this.metageneration = metageneration;
        this.leaseId = leaseId;
        this.acquiredAt = acquiredAt;
        this.lastRefreshAt = gcsUpdated;
        this.lastConfirmedNanos = sentNanos;
        // Built when the write that made (or confirmed) the object has returned: a later time than any of its sends.
        this.lastWriteNanos = engine.nanoTime();
        this.timing = timing;
        this.target = timing;
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
        if (engine.nanoTime() - deadlineNanos() >= 0) {
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
            engine.listeners().dispatchToLeaseListeners(this, () -> once.tell(this, ex));
        }
        return this;
    }

    @Override
    public void release() {
        if (outerHoldReturned.compareAndSet(false, true)) {
            outerHoldGivenBackBy = Thread.currentThread();
            try {
                engine.releaseHold(this);
            } finally {
                outerHoldSettled.countDown(); // also when it began no release (other holds left) or failed
            }
        } else {
            // Given back already — by a loss listener that released it, by close(), by an earlier call. If that
            // release is still deleting the object, return when it has ended: a release() that returned at once would
            // leave the object in the bucket and the name taken here, so the caller's next tryAcquire would be refused
            // without a request (rule 16; found by the interleaving explorer, issue 29).
            engine.awaitReleaseInFlight(this);
        }
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", token=" + generation + ", " + state + (lostReason != null ? ": " + lostReason : "") + "]";
    }

    // ---- engine side ----

    /**
     * Takes the lease's I/O lock (reentrant). No listener runs on this thread while it holds it (rule 20): the events
     * it raises meanwhile (its requests' outcomes) take their place among the lock's events at once, and are delivered
     * when it lets the lock go ({@link #unlockIo()}) — a listener blocking in a renewal's request event held back the
     * lease's refreshes until it was lost.
     */
    void lockIo() {
        io.lock();
        if (io.getHoldCount() == 1) {
            LockEventDispatcher.holdBack();
            IO_LOCKS_HELD.get().add(this);
        }
    }

    /**
     * The leases whose I/O lock the current thread holds, of every registry: a lease released on this thread inside a
     * renewal of it (the transport) is neither live nor released in flight any more, and its lock is still held (rule 14).
     */
    private static final ThreadLocal<List<GcsLease>> IO_LOCKS_HELD = ThreadLocal.withInitial(java.util.ArrayList::new);

    /** Whether the current thread holds the I/O lock of a lease that {@code engine} handed out (rule 14). */
    static boolean ioLockHeldOnThisThreadOfALeaseOf(Engine engine) {
        for (GcsLease lease : IO_LOCKS_HELD.get()) {
            if (lease.engine == engine) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the calling thread holds this lease's I/O lock (a renewal, a refresh or a release of it is on this thread):
     * work waiting for that lock cannot go on while this thread waits for it (rule 14).
     */
    boolean ioHeldByCurrentThread() {
        return io.isHeldByCurrentThread();
    }

    /** Lets the I/O lock go; the outermost release of it delivers the events held back since ({@link #lockIo()}). */
    void unlockIo() {
        boolean outermost = io.getHoldCount() == 1;
        if (outermost) {
            IO_LOCKS_HELD.get().remove(this);
        }
        io.unlock();
        if (outermost) {
            LockEventDispatcher.letGo();
        }
    }

    /** Takes the outermost hold for a deferred release ({@code releaseAfter}); false if it was already given back. */
    boolean claimOuterHold() {
        boolean claimed = outerHoldReturned.compareAndSet(false, true);
        if (claimed) {
            outerHoldSettled.countDown(); // the release comes after the delay: a racing release() does not wait for that
        }
        return claimed;
    }

    /** See {@link #outerHoldSettled}: the release of the call that gave the outermost hold back has begun, or none will. */
    void outerHoldSettled() {
        outerHoldSettled.countDown();
    }

    java.util.concurrent.CountDownLatch outerHoldSettledLatch() {
        return outerHoldSettled;
    }

    /** Whether the call that gave the outermost hold back runs on the calling thread (code inside it coming back). */
    boolean outerHoldGivenBackOnThisThread() {
        return outerHoldGivenBackBy == Thread.currentThread();
    }

    /** Gives back one reentrant hold (not the outermost one, which {@link #release()} gives back). */
    void releaseReentrantHold() {
        engine.releaseHold(this);
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

    /** Marks the start of release on the calling thread; false if it had already started. */
    synchronized boolean beginRelease() {
        if (releasing) {
            return false;
        }
        releasing = true;
        releasingThread = Thread.currentThread();
        return true;
    }

    /** Whether the release of this lease that began runs on the calling thread (code inside that release coming back, rule 14). */
    boolean releasingOnThisThread() {
        return releasingThread == Thread.currentThread();
    }

    /** The release that began has finished: its delete is done (or given up) and the name is free here. */
    void releaseEnded() {
        releaseEnded.countDown();
    }

    /** Counted down by {@link #releaseEnded()}: what a release() or close() racing this release waits for (rule 14). */
    CountDownLatch releaseEndedLatch() {
        return releaseEnded;
    }

    /** The release's delete is done with; after a loss being declared has been queued for the listeners (rule 20). */
    synchronized void released() {
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

    /** A renewal to {@code next} failed: refreshes write {@code before} again (unless another renewal retargeted meanwhile). */
    synchronized void retargetBack(LeaseTiming next, LeaseTiming before) {
        if (target == next) {
            target = before;
        }
    }

    /**
     * Time between refreshes: the shortest refresh interval of the timings that may judge the object now — the
     * one in force, the one refreshes write, and a shorter one whose write may have committed unseen (the capped
     * deadline). A refresh cadence slower than the deadline in force would lose a healthy lease.
     */
    Duration refreshInterval() {
        Duration d = target.refreshInterval();
        Duration inForce = timing.refreshInterval();
        if (inForce.compareTo(d) < 0) {
            d = inForce;
        }
        LeaseTiming cap = deadlineCapTiming;
        if (deadlineCapped && cap != null && cap.refreshInterval().compareTo(d) < 0) {
            d = cap.refreshInterval();
        }
        return d;
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
                deadlineCapTiming = sent;
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

    /**
     * A refresh of ours was confirmed by GCS (its reply, or the adoption of an earlier one of ours after 412): the lease
     * takes it, and the registry's listeners are told {@code refreshed} — only if the lease is still ACTIVE and its
     * deadline has not passed (rule 11: healthy only until then; LOST is final, a late reply does not revive it). Under
     * the lease's monitor, as {@link #markLost} is: the deadline timer cannot declare the loss between this check and the
     * confirmation, so no {@code refreshed} ever follows {@code lost}. <em>Race closed (found by
     * {@code EngineInterleavingExplorerTest}, issue 29, once a yield point opened the window):</em> the refresh saw the
     * lease ACTIVE, the deadline timer then marked it lost and queued {@code lost}, and the refresh went on to confirm it
     * and queue {@code refreshed} after it.
     *
     * @param carried the timing the confirmed refresh carried (in force now), or null (an earlier refresh was adopted)
     * @return false if the lease was lost (before, or now because its deadline had passed): nothing was confirmed
     */
    synchronized boolean confirmRefresh(long newMetageneration, long sentNanos, Instant gcsUpdated, LeaseTiming carried) {
        // As isHealthy() judges: a lease whose release has begun is not declared lost by its deadline (the application
        // let it go; its release waits for this refresh and needs the object's new metageneration).
        if (state != State.ACTIVE || !releasing && engine.nanoTime() - deadlineNanos() >= 0) {
            markLost(deadlineReason()); // none if lost already; else the reply came after the deadline: already unhealthy
            return false;
        }
        confirmed(newMetageneration, sentNanos, gcsUpdated);
        if (carried != null) {
            timingConfirmed(carried);
        }
        engine.listeners().refreshed(this);
        return true;
    }

    /** A write of ours was confirmed by GCS: the object's updated is no earlier than {@code sentNanos}. */
    void confirmed(long newMetageneration, long sentNanos, Instant gcsUpdated) {
        this.metageneration = newMetageneration;
        this.lastConfirmedNanos = Math.max(this.lastConfirmedNanos, sentNanos);
        this.lastRefreshAt = gcsUpdated;
        this.consecutiveFailures = 0;
        this.unconfirmedRefreshes.clear(); // the object moved past every earlier refresh of ours
    }

    /**
     * A write of ours to the object is sent now, or its call ended now (its reply came, or it failed): the write
     * window of rule 21 counts from the later of the two. Never moves back.
     */
    synchronized void wrote(long nanos) {
        if (nanos - lastWriteNanos > 0) {
            lastWriteNanos = nanos;
        }
    }

    /** Monotonic time of the send of this lease's last confirmed write (its create, or a refresh): rule 11's anchor. */
    long lastConfirmedNanos() {
        return lastConfirmedNanos;
    }

    /** Monotonic time of this process's last write to the object (see {@link #wrote}). */
    long lastWriteNanos() {
        return lastWriteNanos;
    }

    /** Refreshes sent since the last confirmed one whose outcome is unknown. Under the I/O lock. */
    UnconfirmedRefreshes unconfirmedRefreshes() {
        return unconfirmedRefreshes;
    }

    /** Counts a failed refresh; returns the failures since the last confirmed one. Under the I/O lock. */
    int refreshFailed() {
        return ++consecutiveFailures;
    }

    /** The schedule of refreshes this lease is on now. */
    int refreshChain() {
        return refreshChain.get();
    }

    /** Starts a new schedule (a renewal): a refresh of an older one, running now, does not reschedule itself. */
    void newRefreshChain() {
        refreshChain.incrementAndGet();
    }

    void refreshScheduled(ScheduledFuture<?> task) {
        this.refreshTask = task;
    }

    void deadlineArmed(ScheduledFuture<?> task) {
        this.deadlineTask = task;
    }

    void cancelRefresh() {
        cancel(refreshTask);
    }

    void cancelDeadline() {
        cancel(deadlineTask);
    }

    private static void cancel(ScheduledFuture<?> task) {
        if (task != null) {
            task.cancel(false);
        }
    }

    /**
     * Declares the lease lost (once); tells listeners. Returns true if this call made it so. The loss takes its place
     * among every listener's events of the lock in the same step as the transition (rule 20): a release that follows it
     * (an {@code onLost} listener's, or a thread's that saw the lease unhealthy) takes this lease's monitor to begin and
     * to end ({@link #beginRelease}, {@link #released}), so every listener hears {@code lost} before that release's
     * {@code released}. Queuing only: the callbacks run on the listener threads.
     */
    boolean markLost(String reason) {
        synchronized (this) {
            if (state != State.ACTIVE) {
                return false;
            }
            state = State.LOST;
            lostReason = reason;
            cancelRefresh();
            cancelDeadline();
            LockLostException ex = new LockLostException(name, generation, reason);
            if (!releasing) {
                log.warn("{}", ex.getMessage());
            }
            // The callbacks run on the listener threads, so that the deadline timer and the refresher never wait for a
            // listener (an alert sent over HTTP) — rules 11 and 20.
            engine.listeners().lost(this, ex, () -> {
                for (LostListener l : listeners) {
                    l.tell(this, ex);
                }
            });
        }
        return true;
    }

    /** Whether {@code e} (a registry's lease issuer) handed out this lease: renew and releaseAfter take only their own. */
    boolean issuedBy(Engine e) {
        return engine == e;
    }

        /** A listener given to {@link #onLost}, told at most once. */
    private final class LostListener {
        private final LeaseLostListener listener;
        private final AtomicBoolean told = new AtomicBoolean();

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
            } catch (Error e) {
                // rule 20: one failing listener never hides the event from the others (the lease's other lost
                // listeners, told after it on the same listener thread; the registry's are told on channels of their own)
                log.warn("lease-lost listener of lock '{}' threw {}; the other listeners are told all the same", name, e.toString());
                log.debug("the listener's error", e);
            }
        }
    }
}
