package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.LocalHolds.LocalSlot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Hands out leases, and takes them all back when the registry closes. Builds the lease of an object an
 * {@link AcquireAttempt} created or adopted, registers it (kept by the {@link LeaseKeeper}, released by
 * close), checks its fencing token (rule 18) and tells the listeners first (rule 20). Handing out and
 * closing are serialised (rule 14): a lease is either handed out before close() takes its snapshot, or
 * its object is deleted again. It is the {@link AcquireAttempt}'s and every {@link GcsLease}'s view of the
 * engine.
 */
final class LeaseIssuer implements AcquireAttempt.Engine, GcsLease.Engine {

    private static final Logger log = LoggerFactory.getLogger(LeaseIssuer.class);

    private final EngineContext context;
    private final Listeners listeners;
    /** Per name: the local permit, its owner thread and hold count (rules 13, 17); the leases held. */
    private final LocalHolds holds;
    private final LeaseKeeper keeper;
    private final LeaseRelease release;
    private final LockInspector inspector;
    /** Per name, the highest generation seen: a fencing token that did not increase is reported (rule 18). */
    private final FencingRecord fencing;
    /** How long close() waits, in all, for the releases running elsewhere (one release's worst case, see GcsLockRegistry). */
    private final Duration releaseBound;
    /**
     * Serialises handing out a lease with {@link #close()}: a create that finishes while close() runs
     * either registers its lease before close() takes its snapshot (and close() releases it) or sees
     * the registry closed (and deletes its object). Without it the lease escapes unrefreshed.
     */
    private final Object lifecycle = new Object();
    private volatile boolean closed;
    /**
     * Creates sent, or about to be, whose lease is not handed out yet and whose object is not deleted again (rule 14);
     * guarded by {@link #lifecycle}. close() waits for them: an object of ours must not land after close() returned.
     */
    private final java.util.Set<AcquireAttempt.CreateInFlight> creates = new java.util.LinkedHashSet<>(); // insertion order: a seed of the interleaving explorer replays one schedule
    /** Counted down when the first close() has finished, for a second one to wait on. */
    private final java.util.concurrent.CountDownLatch closeDone = new java.util.concurrent.CountDownLatch(1);

    LeaseIssuer(EngineContext context, LocalHolds holds, LeaseKeeper keeper, LeaseRelease release,
                LockInspector inspector, FencingRecord fencing, Duration releaseBound) {
        this.context = context;
        this.listeners = context.listeners();
        this.holds = holds;
        this.keeper = keeper;
        this.release = release;
        this.inspector = inspector;
        this.fencing = fencing;
        this.releaseBound = releaseBound;
    }

    /** Throws if the registry is closed (a call that has not started). */
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this GcsLockRegistry is closed");
        }
    }

    /** Throws if the registry is closed (a call for {@code name} under way: it fails with "closed"). */
    void checkOpen(String name) {
        if (closed) {
            throw closedException(name);
        }
    }

    /**
     * Hands out a lease the caller's attempt created: registers it (refreshed, released by close()) and
     * tells the listeners. The caller holds the slot's permit; if this throws, the permit is given back
     * here and the lock object deleted, so a lease that is not handed out never stays behind. {@code create}, the
     * lease's create still counted in flight (null: none), ends once the lease is registered or its object deleted
     * again — before any listener is told (rule 14: close() waits for a create in flight, never for a listener told
     * after it).
     */
    Lease own(LocalSlot slot, GcsLease lease, AcquireAttempt.CreateInFlight create) {
        try {
            return ownAndEnd(slot, lease, create);
        } finally {
            if (create != null) {
                endCreate(create); // if ownAndEnd threw before it ended the create
            }
        }
    }

    private Lease ownAndEnd(LocalSlot slot, GcsLease lease, AcquireAttempt.CreateInFlight create) {
        Runnable tellAcquired = null;
        Long before = null;
        synchronized (lifecycle) {
            if (!closed) {
                holds.own(slot, lease);
                // Rule 20: the lease's first events (fencingTokenRegression, acquired) take their places among the
                // lock's events before its refreshes start, so its loss (a refresh that finds the object gone) comes after.
                before = fencing.regressedFrom(lease);
                tellAcquired = listeners.acquiredQueued(lease, before);
                keeper.start(lease);
            }
        }
        if (tellAcquired == null) {
            // The create raced close(): close() has already released its snapshot of the held leases and
            // stopped the refresher, so nobody would refresh or release this one. Delete it now.
            log.info("lock '{}': the registry was closed while the lock was being acquired; deleting it again", lease.name());
            try {
                release.deleteUnhandedOut(lease);
            } finally {
                if (create != null) {
                    endCreate(create); // its object deleted (or given up): close() may return now
                }
            }
            slot.permit.release();
            throw closedException(lease.name());
        }
        if (create != null) {
            endCreate(create); // registered: in close()'s snapshot, or close() will find it (rule 14)
        }
        log.debug("lock '{}' acquired, fencing token {}", lease.name(), lease.fencingToken());
        if (before != null) {
            log.warn("lock '{}': acquired with fencing token {}, not greater than {} seen earlier for this name; GCS "
                    + "documents generations as unique, not as increasing: a resource that refuses tokens below the "
                    + "last it accepted will refuse this holder's writes", lease.name(), lease.fencingToken(), before);
        }
        try {
            tellAcquired.run(); // fencingTokenRegression (if any), then acquired: first among the lease's events (rule 20)
        } catch (Error e) {
            // Listeners swallows a listener's RuntimeException; an Error (an assertion, a linkage error, an
            // out-of-memory) reaches the caller, whose call fails: it will never release this lease, so
            // release it here instead of leaving it held and refreshed for the life of the process. Every listener
            // was told acquired all the same, before the release's released (rule 20).
            log.warn("lock '{}': a listener failed while the lock was handed out ({}); releasing it", lease.name(), e.toString());
            release.releaseNow(lease);
            throw e;
        }
        return lease;
    }

    /**
     * A call that handed out {@code lease} fails after all (a listener's Error in acquireFinished, rule 20): the lease
     * is released now, whatever holds a listener took on it meanwhile (a nested hold taken in acquired), as a failed
     * hand-out in {@code acquired} is. A call that failed never leaves a lease held.
     */
    void releaseFailedHandOut(Lease lease) {
        if (lease instanceof GcsLease own) {
            release.releaseNow(own);
        } else {
            lease.release();
        }
    }

    /**
     * Closes: no lease is handed out from now on; every lease handed out until now is released (deleting
     * its lock object). {@code wakeWaiters} runs once the registry counts as closed, before the releases.
     * Idempotent.
     */
    void close(Runnable wakeWaiters) {
        List<GcsLease> held;
        synchronized (lifecycle) {
            if (closed) {
                held = null;
            } else {
                closed = true;
                held = holds.live();
            }
        }
        if (held == null) {
            // A second close() (another thread, a shutdown hook) returns only when the first one has: every
            // release it began, and every release in flight elsewhere, has finished (rule 14) -- unless it runs on a
            // thread whose own create or release is in flight (a listener of that create's request, the application's
            // transport inside that release), or that holds a lease's I/O lock (the transport inside a renewal or a
            // refresh): the first close() waits for that very work, or for that lock (its release of the lease), which
            // cannot end while this one waits, so both would sit out the first one's bound -- or, blocked on the I/O
            // lock, wait for each other for ever.
            if (!createInFlightOnThisThread() && !release.releasingOnThisThread() && !ioLockHeldOnThisThread()) {
                awaitUninterruptibly(closeDone);
                awaitWorkTheFirstCloseLeftToItsOwnThread();
            }
            return;
        }
        // Asked before the releases, while the leases whose I/O lock this thread may hold are still live (rule 14).
        boolean holdsAnIoLock = ioLockHeldOnThisThread();
        try {
            release.yieldPoint("close(): closed, waiters not woken yet");
            wakeWaiters.run();
            release.yieldPoint("close(): waiters woken");
            if (!held.isEmpty()) {
                log.info("releasing {} held lock(s) on shutdown", held.size());
            }
            // The releases' events ("released") go to the listener threads: a slow listener of one lock must not
            // hold up the release of the others (rule 20).
            LockEventDispatcher.asEngineThread(() -> {
                for (GcsLease lease : held) {
                    release.releaseNowWithoutWaiting(lease); // one another thread is releasing: waited for below
                }
            });
            // A release already running on the refresher (a hold-at-least release that came due) or on an
            // application thread is not in this loop's hands: let it finish, bounded, so that close() never leaves
            // an object of ours behind — on an interrupted closing thread too (the flag is given back).
            // One bound for the whole wait (rule 14), from here: the refresher's running tasks, then every release in flight
            // elsewhere, share it. A release running elsewhere when this wait begins ends within one bound of its own
            // beginning, so within this wait; two bounds in a row (the refresher's, then the releases') waited twice that.
            release.yieldPoint("close(): its releases done");
            long deadline = release.nanoTime() + releaseBound.toNanos();
            // From the same moment as the deadline: the remaining time is the whole bound. Not on a thread holding a lease's
            // I/O lock: a refresh of that lease, or its hold-at-least release, running on the refresher waits for it.
            keeper.close(releaseBound, holdsAnIoLock);
            release.yieldPoint("close(): refresher closed");
            // The creates in flight first: one that ends by deleting its object counts as a release until then.
            if (!awaitCreates(deadline)) {
                log.warn("gave up waiting {} for lock acquisitions whose create was in flight at close", releaseBound);
            }
            release.yieldPoint("close(): creates in flight done");
            if (!release.awaitReleases(deadline)) {
                log.warn("gave up waiting {} for lock releases in progress at close", releaseBound);
            }
        } finally {
            closeDone.countDown();
        }
    }

    /**
     * Rule 14, for a second close() once the first has returned: the first one does not wait for work on its own thread
     * (close() called by the application's transport inside a release's DELETE, or by a listener of a create's request
     * on the acquiring thread), which goes on after it returned. This thread is not that one: it waits for every
     * create and release still in flight elsewhere, bounded as the first close() is. Without it a second close() on
     * another thread returned with that release's DELETE in flight and its object in the bucket.
     */
    private void awaitWorkTheFirstCloseLeftToItsOwnThread() {
        release.yieldPoint("close(): the first close() has returned");
        long deadline = release.nanoTime() + releaseBound.toNanos();
        if (!awaitCreates(deadline)) {
            log.warn("gave up waiting {} for lock acquisitions whose create was in flight at close", releaseBound);
        }
        if (!release.awaitReleases(deadline)) {
            log.warn("gave up waiting {} for lock releases in progress at close", releaseBound);
        }
    }

    private static void awaitUninterruptibly(java.util.concurrent.CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    static IllegalStateException closedException(String name) {
        return new IllegalStateException("lock '" + name + "' was not acquired: this GcsLockRegistry was closed");
    }

    // ------------------------------------------------------------------ what an attempt and a lease ask

    @Override
    public AcquireAttempt.CreateInFlight beginCreate(String name) {
        synchronized (lifecycle) {
            if (closed) {
                throw closedException(name);
            }
            AcquireAttempt.CreateInFlight create = new AcquireAttempt.CreateInFlight();
            creates.add(create);
            return create;
        }
    }

    @Override
    public void endCreate(AcquireAttempt.CreateInFlight create) {
        synchronized (lifecycle) {
            creates.remove(create);
        }
        create.ended.countDown();
    }

    /**
     * Rule 14: waits until no create is in flight on another thread (each ends once its lease is handed out, or its
     * object deleted again because the registry closed meanwhile), until {@code deadlineNanos} of the runtime's clock,
     * whatever the interrupt flag says. A create on the calling thread itself (close() called by a listener of that
     * create's request) is not waited for: it cannot end while this waits. Returns whether none is left.
     */
    private boolean createInFlightOnThisThread() {
        synchronized (lifecycle) {
            for (AcquireAttempt.CreateInFlight create : creates) {
                if (create.thread == Thread.currentThread()) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Whether the calling thread holds the I/O lock of a lease of this registry (the application's transport inside a
     * renewal, or inside a refresh on the refresher): a release of that lease waits for the lock (rule 14).
     */
    private boolean ioLockHeldOnThisThread() {
        // Not a look over the live leases and the releases in flight: a lease released on this very thread inside a
        // renewal of it is neither any more, and its lock is still held (found by an independent review, issue 29).
        return GcsLease.ioLockHeldOnThisThreadOfALeaseOf(this);
    }

    private boolean awaitCreates(long deadlineNanos) {
        while (true) {
            AcquireAttempt.CreateInFlight running = null;
            synchronized (lifecycle) {
                for (AcquireAttempt.CreateInFlight create : creates) {
                    if (create.thread != Thread.currentThread()) {
                        running = create;
                        break;
                    }
                }
            }
            if (running == null) {
                return true;
            }
            if (!release.awaitIgnoringInterrupts(running.ended, deadlineNanos)) {
                return false;
            }
        }
    }

    @Override
    public GcsLease newLease(String name, Blob object, String leaseId, Instant acquiredAt, long sentNanos, LeaseTiming timing) {
        return new GcsLease(this, name, object.getBlobId(), object.getGeneration(),
                object.getMetageneration(), leaseId, acquiredAt, LockObject.updated(object), sentNanos, timing);
    }

    @Override
    public boolean isLive(String leaseId) {
        return holds.isLive(leaseId);
    }

    @Override
    public LockInfo info(String name, Blob object) {
        return inspector.info(name, object);
    }

    @Override
    public void tookOver(String name, LockInfo stale) {
        listeners.tookOver(name, stale);
    }

    @Override
    public Instant estimatedGcsNow() {
        return context.estimatedGcsNow();
    }

    @Override
    public Instant estimatedGcsNowOrNull() {
        return context.estimatedGcsNowOrNull();
    }

    @Override
    public long nanoTime() {
        return context.nanoTime();
    }

    @Override
    public Listeners listeners() {
        return listeners;
    }

    @Override
    public void releaseHold(GcsLease lease) {
        release.releaseHold(lease);
    }

    @Override
    public void awaitReleaseInFlight(GcsLease lease) {
        release.awaitReleaseInFlight(lease);
    }
}
