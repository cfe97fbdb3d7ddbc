package io.github.gcslock;

import com.google.cloud.storage.StorageException;
import io.github.gcslock.LocalHolds.LocalSlot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.function.LongSupplier;

/**
 * Acquire calls: a one-shot attempt ({@code tryAcquire}) and a wait ({@code acquire}) for an owner (a thread or an
 * invocation, {@link LockOwner}), with local queueing and reentrancy of that owner ({@link LocalHolds}, rule 17),
 * the wait loop and its pace (rule 16), and the hand-out of what an
 * {@link AcquireAttempt} created ({@link LeaseIssuer}). Only the thread holding a name's local permit sends
 * requests for it; a waiter sleeps without it.
 */
final class Acquirer {

    private static final Logger log = LoggerFactory.getLogger(Acquirer.class);

    private final String prefix;
    private final LockStore store;
    private final EngineContext context;
    private final LocalHolds holds;
    private final AcquireAttempt attempts;
    private final LeaseIssuer issuer;
    private final WaitPacing pacing;
    private final Listeners listeners;
    private final LongSupplier nanoTime;
    /** Counted down by close(): wakes every thread sleeping in the wait loop at once (rule 14). */
    private final CountDownLatch closing = new CountDownLatch(1);

    /** Timed waits (real time, unless a test's runtime substitutes virtual time). */
    private final EngineRuntime runtime;

    Acquirer(String prefix, LockStore store, EngineContext context, LocalHolds holds, AcquireAttempt attempts,
             LeaseIssuer issuer, WaitPacing pacing, EngineRuntime runtime) {
        this.runtime = runtime;
        this.prefix = prefix;
        this.store = store;
        this.context = context;
        this.holds = holds;
        this.attempts = attempts;
        this.issuer = issuer;
        this.pacing = pacing;
        this.listeners = context.listeners();
        this.nanoTime = context::nanoTime;
    }

    /**
     * Wakes every waiter (close()); each fails with "closed": the ones sleeping in the wait loop, and the ones queued on
     * a name's local permit behind another call of this process (rule 14), whatever that call blocks in.
     */
    void wakeWaiters() {
        closing.countDown();
        holds.openAll();
    }

    /**
     * Whether a call told acquireStarted. A reentrant hold found before that is no acquisition and is told nothing; one
     * found after it (a listener took the name for this owner inside acquireStarted, rule 17) is told acquireFinished,
     * which always follows acquireStarted (rule 20).
     */
    private static final class Announcement {
        boolean told;
        /** The listeners told its acquireStarted: its acquireFinished goes to them alone (rule 20); null before. */
        Listeners.Announced audience;
    }

    /** {@code tryAcquire} of the public API: one attempt, told to the listeners (acquireStarted ... acquireFinished). */
    Optional<Lease> tryAcquire(String name, Duration ttl, LockOwner owner) {
        long start = nanoTime.getAsLong();
        AcquireOutcome outcome = AcquireOutcome.ERROR;
        Optional<Lease> lease = Optional.empty();
        Throwable failed = null;
        Announcement call = new Announcement();
        try {
            lease = tryOnce(name, context.timingFor(name, ttl), owner.key(), call);
            outcome = lease.isPresent() ? AcquireOutcome.ACQUIRED : AcquireOutcome.BUSY;
            return lease;
        } catch (Throwable e) {
            failed = e;
            throw e;
        } finally {
            if (call.told || !(lease.orElse(null) instanceof ReentrantHold)) { // a reentrant hold is not an acquisition
                finished(name, outcome, start, lease.orElse(null), failed, call.audience);
            }
        }
    }

    /** {@code acquire} of the public API: a wait of up to {@code maxWait}, told to the listeners. */
    Lease acquire(String name, Duration maxWait, Duration ttl, LockOwner owner) throws InterruptedException {
        long start = nanoTime.getAsLong();
        AcquireOutcome outcome = AcquireOutcome.ERROR;
        Lease lease = null;
        Throwable failed = null;
        Announcement call = new Announcement();
        try {
            lease = waitFor(name, maxWait, context.timingFor(name, ttl), owner.key(), call);
            outcome = AcquireOutcome.ACQUIRED;
            return lease;
        } catch (LockNotAcquiredException e) {
            outcome = AcquireOutcome.TIMEOUT;
            failed = e;
            throw e;
        } catch (Throwable e) {
            failed = e;
            throw e;
        } finally {
            if (call.told || !(lease instanceof ReentrantHold)) { // a reentrant hold is not an acquisition
                finished(name, outcome, start, lease, failed, call.audience);
            }
        }
    }

    /**
     * Tells acquireFinished on the acquiring thread; when a listener throws an Error there after the lease was
     * handed out, the call fails, so the lease is released first: a call that failed never leaves a lease held (rule 20).
     * A call already failing ({@code failed}: bad input, GCS unreachable) keeps its own exception, documented for it;
     * the listener's Error is attached to it as suppressed.
     */
    private void finished(String name, AcquireOutcome outcome, long start, Lease handedOut, Throwable failed,
                          Listeners.Announced audience) {
        try {
            listeners.acquireFinished(name, outcome, start, audience); // to the listeners told acquireStarted (rule 20)
        } catch (Error e) {
            if (handedOut != null) {
                log.warn("lock '{}': a listener failed after the lock was handed out ({}); releasing it", name, e.toString());
                // The whole lease, not one hold: a listener may have taken a nested hold of it in acquired.
                issuer.releaseFailedHandOut(handedOut);
            }
            if (failed != null && failed != e) {
                failed.addSuppressed(e);
                return;
            }
            throw e;
        }
    }

    /** One attempt: the lease, or empty if another process — or another owner here, holding or asking — has it. */
    private Optional<Lease> tryOnce(String name, LeaseTiming timing, Object owner, Announcement call) {
        issuer.checkOpen();
        LockObject.validateName(prefix, name);
        LocalSlot slot = holds.pin(name);
        try {
            return tryOnce(name, slot, timing, owner, call);
        } finally {
            holds.unpin(name, slot);
        }
    }

    private Optional<Lease> tryOnce(String name, LocalSlot slot, LeaseTiming timing, Object owner, Announcement call) {
        Lease reentrant = holds.reenter(slot, name, owner);
        if (reentrant != null) {
            return Optional.of(reentrant);
        }
        call.told = true;
        call.audience = listeners.announce();
        listeners.acquireStarted(name, AcquireMode.TRY, call.audience);
        // Rule 17: a listener may have taken the name for this very owner inside acquireStarted (on this thread).
        reentrant = holds.reenter(slot, name, owner);
        if (reentrant != null) {
            return Optional.of(reentrant);
        }
        if (!slot.permit.tryAcquire()) {
            return Optional.empty(); // another owner here (thread or invocation) holds it, or is asking GCS right now
        }
        boolean acquired = false;
        try {
            holds.asking(slot, owner);
            issuer.checkOpen(name);
            // Rule 16: always at least one request (a cron tick must not end with nobody running); a name last
            // seen held by another process costs 1 (a create refused unread while that is fresh, else a read).
            String leaseId = runtime.randomId(8);
            AcquireAttempt.UnknownCreates unknownCreates = new AcquireAttempt.UnknownCreates();
            AcquireAttempt.Result result;
            try {
                result = attempts.attempt(name, leaseId, context.storeFor(timing), unknownCreates, timing, true, false);
            } catch (RuntimeException ended) {
                // Only when the call was cut short (interrupt, call bound, lost connection): when GCS itself answered
                // with an error (an outage's 503s), a read now would fail alike, and would only double the call's
                // requests and failures; such an object, if any, stays for its TTL (or until we retake it, rule 4).
                boolean answered = ended instanceof StorageException se && se.getCode() > 0;
                try {
                    if (unknownCreates.ofThisCall() && !answered) {
                        attempts.deleteOwnUnknownCreate(name, leaseId, context.storeFor(timing).singleTry());
                    }
                } finally {
                    unknownCreates.endKept(issuer::endCreate); // rule 14: close() waited for this call until here
                }
                throw ended;
            } catch (Error e) {
                unknownCreates.endKept(issuer::endCreate);
                throw e;
            }
            if (result.lease() != null) {
                acquired = true;
                return Optional.of(issuer.own(slot, result.lease(), result.create()));
            }
            unknownCreates.endKept(issuer::endCreate); // not acquired: nothing of ours to adopt (before the listeners)
            listeners.notAcquired(name, result.holder());
            return Optional.empty();
        } catch (StorageException e) {
            // Rule 15: an interrupt that cut the call short is reported as one, not as an outage (GCS did not fail).
            throw LockStore.cutShortByInterrupt(e) ? LockStore.interrupted(name, e) : store.unavailable(name, e);
        } finally {
            if (!acquired) {
                slot.permit.release();
            }
        }
    }

    /** Waits up to {@code maxWait} for the lease. */
    private Lease waitFor(String name, Duration maxWait, LeaseTiming timing, Object owner, Announcement call) throws InterruptedException {
        issuer.checkOpen();
        LockObject.validateName(prefix, name);
        LockSettings.requireNonNegative("maxWait", maxWait);
        LocalSlot slot = holds.pin(name);
        try {
            return waitFor(name, maxWait, slot, timing, owner, call);
        } finally {
            holds.unpin(name, slot);
        }
    }

    private Lease waitFor(String name, Duration maxWait, LocalSlot slot, LeaseTiming timing, Object owner, Announcement call)
            throws InterruptedException {
        long budget = saturatedNanos(maxWait);
        Lease reentrant = holds.reenter(slot, name, owner);
        if (reentrant != null) {
            return reentrant;
        }
        refuseWaitForOwnThread(name, slot, budget, owner);
        call.told = true;
        call.audience = listeners.announce();
        listeners.acquireStarted(name, AcquireMode.WAIT, call.audience);
        // Rule 17 again, after acquireStarted: a listener may have taken the name inside it, on this thread. For this
        // very owner the call is a reentrant hold (told acquireFinished, as every announced call is); for an invocation
        // whose thread now holds it, the wait is refused as above. Checked only before it, the wait sat out its whole
        // budget for a hold of its own owner (Lock.lock(): for ever).
        reentrant = holds.reenter(slot, name, owner);
        if (reentrant != null) {
            return reentrant;
        }
        refuseWaitForOwnThread(name, slot, budget, owner);
        // The budget runs from the announcement of the wait: a wait that ends at its budget without a last look
        // (rule 16) lasts at least maxWait for whoever measures it from acquireStarted.
        long start = nanoTime.getAsLong();
        // One lease id for the whole wait: if a create's reply is lost and the client gives up, our
        // next attempt finds the object with this id and adopts it instead of waiting out the TTL.
        String leaseId = runtime.randomId(8);
        // Creates of this wait whose outcome is unknown (lost reply, timeout): any of them may have
        // written the object we later adopt, so the adopted object is dated from the earliest.
        AcquireAttempt.UnknownCreates unknownCreates = new AcquireAttempt.UnknownCreates();
        try {
            return waitLoop(name, maxWait, slot, timing, budget, start, leaseId, unknownCreates, owner);
        } catch (IllegalStateException | InterruptedException | GcsLockException ended) {
            if (unknownCreates.ofThisCall()) {
                // Rules 3, 14: a create of this wait may have committed with its reply lost; the wait ended (close(),
                // an interrupt, its budget, GCS unreachable) before the next attempt could adopt it. Nothing else
                // will delete it: do it now, bounded, with the interrupt flag clear (the exception consumed it).
                attempts.deleteOwnUnknownCreate(name, leaseId, context.storeFor(timing));
            }
            throw ended;
        } finally {
            // Rule 14: a create of unknown outcome kept this call in flight for close() until its object was adopted
            // (the hand-out ended it) or deleted above, or the call ended any other way.
            unknownCreates.endKept(issuer::endCreate);
        }
    }

    /**
     * Rule 17: an invocation asks to wait for a name that the calling thread itself holds, or any caller for a name held
     * by a lease whose I/O lock the calling thread holds. The thread cannot give the hold back (nor let the release run)
     * while it waits here, so the wait could only end at its budget (or never): refused at once.
     */
    private void refuseWaitForOwnThread(String name, LocalSlot slot, long budget, Object owner) {
        if (budget > 0 && owner != Thread.currentThread() && holds.ownedBy(slot, Thread.currentThread())) {
            throw new IllegalStateException("lock '" + name + "' is held by this thread (" + Thread.currentThread().getName()
                    + "), so " + owner + " would wait for a hold that cannot end while it waits: an invocation is "
                    + "not reentrant into its thread's hold; start it outside that hold, or use a plain call");
        }
        // The same for a wait inside a renewal or refresh of the lease that holds the name (the application's transport
        // calling back): that lease's release waits for the I/O lock this thread holds. The wait sat out its whole budget
        // (Lock.lock(): for ever), and was told another thread holds the name (found by an independent review, issue 29).
        if (budget > 0 && holds.holderWaitsForThisThread(slot)) {
            throw new IllegalStateException("lock '" + name + "' is held here by a lease whose renewal or refresh this thread "
                    + "(" + Thread.currentThread().getName() + ") is inside (the GCS transport calling back): its release waits "
                    + "for that call to end, so a wait for the lock here cannot end; acquire it outside that call");
        }
    }

    private Lease waitLoop(String name, Duration maxWait, LocalSlot slot, LeaseTiming timing, long budget, long start,
                           String leaseId, AcquireAttempt.UnknownCreates unknownCreates, Object owner) throws InterruptedException {
        LockInfo holder = attempts.lastSeenHolder(name);
        StorageException lastError = null;
        boolean held = false;
        boolean asked = false;
        for (int n = 0; ; ) {
            issuer.checkOpen(name);
            // Rule 16: a process that has been seeing the name held (over earlier calls too: a follower calling
            // tryLock(500 ms) back to back, or another thread of it) keeps its pace: a look that is not due yet
            // is waited for, not sent. A wait of zero is one-shot and always asks. The sleep is WITHOUT the name's
            // local permit: a one-shot call of another thread here still makes its request meanwhile (a cron
            // tick must not end with nobody asking because a waiter of this process was sleeping).
            long left = budget - (nanoTime.getAsLong() - start);
            // A wait whose budget has run out looks only if a look is due (its last look at the deadline); else it ends
            // here. It must never take the permit only to find the look not due and go round again: with no budget
            // left that loop spun, a CPU busy until the look came due, and the call outlived maxWait.
            long untilDue = budget > 0 ? attempts.nanosUntilNextLook(name) : 0;
            if (untilDue > 0) {
                boolean woken = runtime.await(closing, Math.min(untilDue, left));
                if (woken) {
                    issuer.checkOpen(name); // close() woke us
                }
                if (untilDue > left) {
                    // The next look is not due within this call: no look at the deadline (it keeps its pace).
                    throw asked ? new LockNotAcquiredException(name, maxWait, holder, null, true)
                            : LockNotAcquiredException.noLookDue(name, maxWait, holder);
                }
                continue;
            }
            if (!runtime.tryAcquire(slot.permit, Math.max(0, left))) {
                throw new LockNotAcquiredException(name, maxWait, null, lastError);
            }
            boolean acquired = false;
            try {
                holds.asking(slot, owner);
                // close() while this thread queued on the local permit: the thread that had it was woken by
                // close() and gave it up; so do we, rather than start asking GCS for a closed registry.
                issuer.checkOpen(name);
                if (budget > 0 && attempts.nanosUntilNextLook(name) > 0) {
                    // While we queued, another thread of this process looked: keep its pace (above, without the permit).
                    continue;
                }
                try {
                    held = false;
                    asked = true;
                    // Read first once the lock was seen held (1 request a look, not a create + read); create
                    // when it is gone, take over when stale (rules 2-5, 16). A wait of zero is one-shot.
                    AcquireAttempt.Result result = attempts.attempt(name, leaseId, context.storeFor(timing).singleTry(), unknownCreates, timing, budget == 0,
                            lastError != null && lastError.getCode() == 429);
                    if (result.lease() != null) {
                        acquired = true;
                        return issuer.own(slot, result.lease(), result.create());
                    }
                    holder = result.holder();
                    held = result.held();
                    lastError = null;
                    listeners.notAcquired(name, result.holder());
                } catch (StorageException e) {
                    if (!LockStore.isTransient(e)) {
                        throw store.unavailable(name, e);
                    }
                    lastError = e;
                    log.debug("lock '{}': transient GCS error while acquiring, will retry: {}", name, e.getMessage());
                }
            } finally {
                if (!acquired) {
                    slot.permit.release();
                }
            }
            long remaining = budget - (nanoTime.getAsLong() - start);
            if (remaining <= 0) {
                throw new LockNotAcquiredException(name, maxWait, holder, lastError, held);
            }
            if (held && attempts.nanosUntilNextLook(name) > 0) {
                n++;
                continue; // the next look the attempt scheduled (its interval grows with the time waited): above
            }
            // Rule 16: after a 429 the write window, after other errors the backoff.
            long delay = lastError != null ? pacing.afterError(lastError, n).toNanos() : pacing.backoffDelay(n).toNanos();
            n++;
            if (runtime.await(closing, Math.min(remaining, delay))) {
                issuer.checkOpen(name); // close() woke us: fail now, not after the backoff
            }
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 2;
        }
    }
}
