package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.StorageException;
import io.github.gcslock.LocalHolds.LocalSlot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;
import java.util.function.ObjLongConsumer;

/**
 * Ends leases: gives back holds (the last one releases), releases after a hold-at-least delay (rule 13),
 * and releases — stops keeping the lease, waits for an in-flight refresh, deletes the lock object guarded
 * by generation and metageneration (rule 12; after a 412, deletes it only if it is still ours), frees the
 * name locally and tells the listeners.
 */
final class LeaseRelease {

    private static final Logger log = LoggerFactory.getLogger(LeaseRelease.class);

    private final LockStore store;
    private final LeaseKeeper keeper;
    private final LocalHolds holds;
    private final Listeners listeners;
    private final ProcessIdentity me;
    /** GCS allows about one write per second to one object name; after a 429, waiting this long helps. */
    private final Duration writeRateWindow;
    /** The registry's TTL, named when an object is left behind. */
    private final Duration ttl;
    private final LongSupplier nanoTime;
    /** Told the name and the DELETE's send time when a release deleted its object (rule 16: no leak of ours). */
    private final ObjLongConsumer<String> releasedCleanly;
    /** The write-window wait (real time, unless a test's runtime substitutes virtual time). */
    private final EngineRuntime runtime;
    /**
     * Leases whose release began and has not ended, on any thread (rule 14: close() and a racing release() wait for
     * them). A lease enters in the same step as its release begins ({@link #begin}), so that whoever finds the release
     * begun by another thread also finds it here. Guarded by itself.
     */
    private final Set<GcsLease> inFlight = new java.util.LinkedHashSet<>(); // insertion order: a seed of the interleaving explorer replays one schedule
    /**
     * How long a release() waits for a release of its lease that another thread (close()) began, and close() for the
     * releases in flight: one release's worst case, eight bounded calls and four write windows (derived in
     * GcsLockRegistry; rules 12, 14, 15, 21).
     */
    private final Duration releaseBound;

    LeaseRelease(LockStore store, LeaseKeeper keeper, LocalHolds holds, Listeners listeners, ProcessIdentity me,
                 Duration writeRateWindow, Duration ttl, LongSupplier nanoTime, ObjLongConsumer<String> releasedCleanly,
                 EngineRuntime runtime, Duration releaseBound) {
        this.runtime = runtime;
        this.releaseBound = releaseBound;
        this.nanoTime = nanoTime;
        this.releasedCleanly = releasedCleanly;
        this.store = store;
        this.keeper = keeper;
        this.holds = holds;
        this.listeners = listeners;
        this.me = me;
        this.writeRateWindow = writeRateWindow;
        this.ttl = ttl;
    }

    /** Gives back one hold; the lock object is deleted when the last hold of the name is given back. */
    void releaseHold(GcsLease lease) {
        if (holds.giveBackHold(lease)) {
            releaseNow(lease);
        }
    }

    /**
     * {@code releaseAfter} of the public API: a nested (reentrant) hold is given back at once, a delay of zero
     * releases now, otherwise as {@link #releaseAfter(GcsLease, Duration)}.
     */
    void releaseAfter(Lease lease, Duration delay) {
        LockSettings.requireNonNegative("delay", delay);
        if (lease instanceof ReentrantHold) {
            lease.release(); // a nested hold: the outermost hold decides when the lock goes
            return;
        }
        if (!(lease instanceof GcsLease target)) {
            throw new IllegalArgumentException("not a lease of this registry: " + lease);
        }
        if (delay.isZero()) {
            target.release();
            return;
        }
        releaseAfter(target, delay);
    }

    /**
     * Gives back the outermost hold of {@code lease} now and releases it after {@code delay} (positive), on
     * the keeper's scheduler; the lease keeps being refreshed until then.
     */
    void releaseAfter(GcsLease lease, Duration delay) {
        LocalSlot slot = holds.deferRelease(lease); // rule 13: the name stays taken, no thread owns it
        if (slot == null) {
            return; // already released
        }
        try {
            keeper.schedule(() -> releaseDeferred(slot, lease), delay);
        } catch (RejectedExecutionException closedMeanwhile) {
            releaseDeferred(slot, lease); // close() stopped the scheduler after our check: release now (or close() did)
        }
    }

    /** The end of a hold-at-least delay: releases the lease unless a nested hold of its thread is still open. */
    private void releaseDeferred(LocalSlot slot, GcsLease lease) {
        if (holds.deferredReleaseDue(slot, lease)) {
            releaseNow(lease);
        }
    }

    /**
     * Releases {@code lease} now, whatever its holds (a failed hand-out, a delayed release); once. If another thread's
     * release of it began first (close()'s), this returns only when that one has ended: a release() that returned
     * while close() was still deleting the object left it in the bucket after release() (rule 14). Bounded; the
     * thread that is itself releasing the lease (code inside that release coming back: the application's GCS transport;
     * no listener runs there while it is in flight, rule 20), or that holds the lease's I/O lock, which that release
     * waits for (the transport inside a renewal or a refresh of the lease), returns at once.
     */
    void releaseNow(GcsLease lease) {
        if (!release(lease)) {
            awaitReleaseByAnotherThread(lease, runtime.nanoTime() + releaseBound.toNanos());
        }
    }

    /**
     * close()'s release of one lease of its snapshot: as {@link #releaseNow}, but a release another thread began is
     * not waited for here — close() waits for every release in flight afterwards ({@link #awaitReleases}), so that a
     * slow one does not hold up the release of the others.
     */
    void releaseNowWithoutWaiting(GcsLease lease) {
        release(lease);
    }

    /** The release itself (rule 12); false if a release of {@code lease} had already begun (this one did nothing). */
    private boolean release(GcsLease lease) {
        if (!begin(lease)) {
            return false;
        }
        // Rules 14, 20: the outcomes of this release's requests (its DELETE's requestAnswered, ...) take their places
        // among the lock's events at once but are delivered only once the release has ended: close() and a racing
        // release() wait for a release in flight, never for a listener of it.
        LockEventDispatcher.holdBack();
        try {
            runtime.yieldPoint("release of '" + lease.name() + "' begun");
            keeper.stop(lease);
            runtime.yieldPoint("release of '" + lease.name() + "': refreshes stopped");
            lease.lockIo(); // waits for an in-flight refresh, whose metageneration we need
            try {
                if (lease.state() == GcsLease.State.ACTIVE || lease.state() == GcsLease.State.LOST) {
                    deleteOnRelease(lease);
                }
            } finally {
                lease.released();
                lease.unlockIo();
            }
        } finally {
            // "released" takes its place among the lock's events before the name is free here, so the next lease's
            // "acquired" comes after it (rule 20); delivered here if this is an application thread.
            runtime.yieldPoint("release of '" + lease.name() + "': object done with");
            Runnable tellReleased = listeners.releasedQueued(lease);
            try {
                holds.released(lease); // frees the name's permit (rule 17: and forgets an idle name)
                runtime.yieldPoint("release of '" + lease.name() + "': name freed here");
            } finally {
                end(lease); // before the listeners: a release() or close() waiting for this one does not wait for listeners
                try {
                    LockEventDispatcher.letGo(); // this release's request events, held back until it ended (rule 20)
                } finally {
                    tellReleased.run();
                }
            }
        }
        return true;
    }

    /** The runtime's clock (real time, or a test's virtual time), which the waits of close() count in. */
    long nanoTime() {
        return runtime.nanoTime();
    }

    /** A step of close() whose order other threads can see ({@link EngineRuntime#yieldPoint}). */
    void yieldPoint(String step) {
        runtime.yieldPoint(step);
    }

    /** Deletes the object of a lease that was never handed out (its create raced close()). */
    void deleteUnhandedOut(GcsLease lease) {
        synchronized (inFlight) {
            lease.beginRelease();
            inFlight.add(lease);
        }
        LockEventDispatcher.holdBack(); // its request events after it ended: close() waits for it, never for a listener
        try {
            deleteOnRelease(lease);
        } finally {
            lease.released();
            end(lease);
            LockEventDispatcher.letGo();
        }
    }

    /**
     * Begins the release of {@code lease} on this thread and counts it in flight, in one step: a thread that finds the
     * release begun (close() taking its snapshot, a racing release()) always finds it in flight too. There is no moment
     * at which a release has begun, so others skip it, but close() cannot see it yet.
     */
    private boolean begin(GcsLease lease) {
        try {
            synchronized (inFlight) {
                if (!lease.beginRelease()) {
                    return false;
                }
                inFlight.add(lease);
                return true;
            }
        } finally {
            lease.outerHoldSettled(); // begun (or another release had): a release() that came second now finds it in flight
        }
    }

    /** Whether a release is in flight on the calling thread (a call of the application's code made from inside it). */
    boolean releasingOnThisThread() {
        return anyInFlight(GcsLease::releasingOnThisThread);
    }

    private boolean anyInFlight(java.util.function.Predicate<GcsLease> test) {
        synchronized (inFlight) {
            for (GcsLease lease : inFlight) {
                if (test.test(lease)) {
                    return true;
                }
            }
            return false;
        }
    }

    private void end(GcsLease lease) {
        synchronized (inFlight) {
            inFlight.remove(lease);
        }
        lease.releaseEnded();
    }

    /**
     * A release() of a lease whose outermost hold was given back already: if a release of it is in flight (a loss
     * listener's, close()'s, a hold-at-least release that came due), waits for it as {@link #releaseNow} does; a
     * release not begun yet (a hold-at-least delay still running) is not waited for.
     */
    void awaitReleaseInFlight(GcsLease lease) {
        // The call that gave the outermost hold back may not have begun its release yet: a loss listener's release()
        // blocks on the lease's monitor while the refresher declares the lease lost. Looking at once found no release
        // in flight, and this release() returned with the object in the bucket and the name taken here (rule 12; found
        // by EngineInterleavingExplorerTest alone). Wait until it has begun, or found none to begin — bounded; never for
        // a call on this very thread, which cannot go on while this waits.
        // One bound in all, for the beginning and then the end of that release (rule 14): a fresh bound for each waited
        // up to twice the documented one.
        long deadline = runtime.nanoTime() + releaseBound.toNanos();
        if (!lease.outerHoldGivenBackOnThisThread()
                && !awaitIgnoringInterrupts(lease.outerHoldSettledLatch(), deadline)) {
            log.warn("lock '{}': gave up waiting {} for the release another thread began", lease.name(), releaseBound);
            return;
        }
        if (lease.isReleasing()) {
            awaitReleaseByAnotherThread(lease, deadline);
        }
    }

    /**
     * A release of {@code lease} that another thread began (close()'s): waits until it has ended, until
     * {@code deadlineNanos} of the runtime's clock.
     */
    private void awaitReleaseByAnotherThread(GcsLease lease, long deadlineNanos) {
        if (lease.releasingOnThisThread()) {
            return; // this very thread is releasing it (code inside that release, rule 14): it cannot wait for itself
        }
        if (lease.ioHeldByCurrentThread()) {
            // This thread holds the lease's I/O lock (the application's transport inside a renewal or a refresh of it),
            // which that release waits for before its DELETE: it cannot end while this waits, and this release() sat out
            // its whole bound (rule 14, as close() skips such a release). Its object goes once the lock is let go.
            return;
        }
        if (!awaitIgnoringInterrupts(lease.releaseEndedLatch(), deadlineNanos)) {
            log.warn("lock '{}': gave up waiting {} for the release another thread began (its object may still be "
                    + "there until that release ends, or until its TTL ({}) passes)", lease.name(), releaseBound, ttl);
        }
    }

    /**
     * Waits until no release is deleting its object, on any thread — the application's, the refresher's, close()'s, the
     * delete of a create that raced close() — until {@code deadlineNanos} of the runtime's clock, whatever the interrupt
     * flag says (it is given back). Rule 14: close() returns only when every release in flight has finished. The set is
     * looked at again after each wait until it is empty: a release that began while this waited (a create that raced
     * close() finding the registry closed at hand-out and deleting its object) is waited for too — a single snapshot
     * let close() return with that object in the bucket. A release running on the calling thread itself (close() called
     * by code inside that release: the application's GCS transport; no listener runs there while it is in flight, rule
     * 20) is not waited for: it cannot end while this waits. Returns whether none is left.
     */
    boolean awaitReleases(long deadlineNanos) {
        while (true) {
            GcsLease running = null;
            synchronized (inFlight) {
                for (GcsLease lease : inFlight) {
                    // Neither a release on this thread nor one waiting for the I/O lock this thread holds (close() called
                    // by the application's transport inside a renewal of that lease) can end while this waits.
                    if (!lease.releasingOnThisThread() && !lease.ioHeldByCurrentThread()) {
                        running = lease;
                        break;
                    }
                }
            }
            if (running == null) {
                return true;
            }
            if (!awaitIgnoringInterrupts(running.releaseEndedLatch(), deadlineNanos)) {
                return false;
            }
        }
    }

    /**
     * Waits for {@code done} until {@code endNanos} of the runtime's clock (real time, or a test's virtual time),
     * whatever interrupts come; the flag is given back. True if it was counted down.
     */
    boolean awaitIgnoringInterrupts(CountDownLatch done, long endNanos) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (runtime.await(done, Math.max(0, endNanos - runtime.nanoTime()))) {
                        return true;
                    }
                    if (endNanos - runtime.nanoTime() <= 0) {
                        return done.getCount() == 0;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void deleteOnRelease(GcsLease lease) {
        // Rule 12 whatever the interrupt flag says: a cancelled task's thread releases too, and an interrupt would
        // end the write-window wait at once and break the client's retry, leaving our object for its TTL. The
        // delete runs with the flag clear (bounded by the operation timeout, as ever); the flag is given back after.
        CallsThroughInterrupts calls = new CallsThroughInterrupts();
        try {
            deleteOnReleaseUninterrupted(lease, calls);
        } finally {
            calls.restoreFlag();
        }
    }

    /** The guarded delete of rule 12, on a thread whose interrupt flag is clear. */
    private void deleteOnReleaseUninterrupted(GcsLease lease, CallsThroughInterrupts calls) {
        try {
            // DESIGN.md rule 12: guarded by generation + metageneration, so that a late release never
            // deletes a newer holder's object.
            boolean deleted;
            // Rule 21: not within the write window of our last write to the object (the create of a short hold, a
            // refresh that just ran): GCS would answer 429. Wait for the window's end, then delete.
            calls.interruptSeen(awaitWriteWindow(lease));
            long sent = nanoTime.getAsLong();
            lease.wrote(sent);
            try {
                deleted = store.singleTry().delete(lease.blobId(), lease.fencingToken(), lease.metageneration());
            } catch (StorageException first) {
                if (!LockStore.isTransient(first)) {
                    throw first;
                }
                if (first.getCode() == 429) {
                    // GCS's write limit on one object (about one per second): our last write was under a
                    // second ago. Wait that second out once instead of letting the client retry every 50 ms.
                    calls.interruptSeen(sleepUninterruptibly(writeRateWindow));
                }
                deleted = calls.send(() -> store.delete(lease.blobId(), lease.fencingToken(), lease.metageneration()));
            }
            log.debug("lock '{}' released ({})", lease.name(), deleted ? "deleted" : "was already gone");
            if (deleted) {
                releasedCleanly.accept(lease.name(), sent); // rule 16: no leak of ours; later objects are younger
            }
        } catch (StorageException e) {
            if (e.getCode() == 412) {
                try {
                    deleteIfStillOurs(lease, calls);
                } catch (RuntimeException again) {
                    log.warn("lock '{}': could not delete the lock object on release ({}); it stays until its TTL ({}) "
                            + "passes, or until this process asks for the lock again", lease.name(), again.getMessage(), ttl);
                }
            } else {
                log.warn("lock '{}': could not delete the lock object on release ({}); it stays until its TTL ({}) "
                        + "passes, or until this process asks for the lock again", lease.name(), e.getMessage(), ttl);
            }
        } catch (RuntimeException e) {
            log.warn("lock '{}': could not delete the lock object on release; it stays until its TTL ({}) passes",
                    lease.name(), ttl, e);
        }
    }

    /**
     * After a release's DELETE met 412: either someone else holds the name now, or a write of ours
     * committed unseen (a refresh whose reply was lost or came after the timeout) and moved the
     * metageneration. Read once; if the object is still this lease's (same generation, our owner and
     * lease id), delete it guarded by what we read, so a lease never ends leaving its object behind.
     * Both calls are sent again after an interrupt broke them, as the first DELETE is.
     */
    private void deleteIfStillOurs(GcsLease lease, CallsThroughInterrupts calls) {
        BlobId id = BlobId.of(lease.blobId().getBucket(), lease.blobId().getName());
        Blob current = calls.send(() -> store.read(id));
        if (current == null || current.getGeneration() != lease.fencingToken() || !me.isOurs(current, lease.leaseId())) {
            log.debug("lock '{}' released: it had been taken over, nothing of ours to delete", lease.name());
            return;
        }
        // Generation + metageneration as read: if anyone changes it after our read, this delete fails.
        calls.send(() -> store.delete(current.getBlobId(), current.getGeneration(), current.getMetageneration()));
        log.debug("lock '{}' released: deleted after a write of ours had moved its metageneration unseen", lease.name());
    }

    /**
     * Before an administrator's forced delete of {@code name}'s object at {@code fencingToken}: if it is a lease of
     * this process, waits until one write window has passed since our last write to it (rule 21), so that the
     * delete GCS would refuse with 429 (a create or refresh of ours a moment ago) is not sent. The interrupt flag,
     * if an interrupt came meanwhile, is set again.
     */
    void awaitWriteWindowBeforeForcedDelete(String name, long fencingToken) {
        for (GcsLease lease : holds.live()) {
            if (lease.name().equals(name) && lease.fencingToken() == fencingToken && awaitWriteWindow(lease)) {
                Thread.currentThread().interrupt();
            }
        }
        // A create of ours whose lease is not handed out yet (its acquiring thread still in a request listener) is
        // not among the live leases: wait out the window after our last create of the object too. (Found by the
        // interleaving explorer, issue 29: a forced delete 0.67 s after our own create, "p1 wrote 'x' (delete) within
        // the write window".) If the object there now is not the one our create wrote, this waits at most one window
        // (1 s by default) that was not needed.
        Long created = name == null ? null : store.lastCreateEnded(store.id(name));
        if (created != null && awaitWriteWindowAfter(created)) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Sleeps until the registry's clock is one write window past the last write of ours to the lease's object
     * (rule 21), whatever interrupts come; true if one came (the caller gives the flag back later).
     */
    private boolean awaitWriteWindow(GcsLease lease) {
        return awaitWriteWindowAfter(lease.lastWriteNanos());
    }

    /** As {@link #awaitWriteWindow(GcsLease)}, after a write of ours that ended at {@code writeEndedNanos}. */
    private boolean awaitWriteWindowAfter(long writeEndedNanos) {
        return runtime.sleepUntilIgnoringInterrupts(writeEndedNanos + writeRateWindow.toNanos(), nanoTime);
    }

    /** Sleeps {@code d} whatever interrupts come; true if one came (the caller gives the flag back later). */
    private boolean sleepUninterruptibly(Duration d) {
        boolean interrupted = false;
        long end = runtime.nanoTime() + d.toNanos(); // a real wait (GCS's write window), not the registry's ticker
        for (long left = d.toNanos(); left > 0; left = end - runtime.nanoTime()) {
            try {
                runtime.sleep(left);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        return interrupted;
    }
}
