package io.github.gcslock;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

/**
 * Distributed locks by name. Implementations are thread-safe.
 *
 * <p>Within one process a hold belongs to an owner ({@link LockOwner}). The plain methods acquire for the calling
 * thread: a thread that already holds a name gets a reentrant hold without any remote request. Code whose work
 * may finish on another thread (futures, reactive streams, callbacks) acquires for an invocation
 * ({@link #tryAcquire(String, Duration, LockOwner)}, {@link #acquire(String, Duration, Duration, LockOwner)}): its
 * hold is never entered by another invocation or by a thread that happens to run its code. Owners that want the
 * same name queue locally, so a process contends for a name with at most one of them.
 */
public interface LockRegistry {

    /**
     * One attempt, without waiting: takes the lock if it is free or its holder is provably dead.
     *
     * @return the lease, or empty if someone else (another process, or another thread here) holds it
     * @throws GcsLockException if GCS could not be asked; then it is unknown whether the lock is free. Also when an
     *                          interrupt of the calling thread cut the call short: then its cause is an
     *                          {@link InterruptedException} and the thread's interrupt flag is set again
     * @throws GcsLockConfigurationException if the name is invalid
     */
    Optional<Lease> tryAcquire(String name);

    /**
     * Acquires the lock, waiting up to {@code maxWait} with capped, jittered exponential backoff.
     * Transient GCS errors are retried within the wait.
     *
     * @throws LockNotAcquiredException when the wait runs out (its cause is the last GCS error, if any)
     * @throws InterruptedException     if interrupted while waiting
     */
    Lease acquire(String name, Duration maxWait) throws InterruptedException;

    /**
     * Like {@link #tryAcquire(String)}, with a TTL of this acquisition's own (stored in the lock object, so that
     * other processes judge its staleness by it; its refresh interval and deadline follow from it).
     *
     * @param ttl the lease's TTL; null for the registry's
     * @throws GcsLockConfigurationException if that TTL cannot be refreshed safely
     * @throws UnsupportedOperationException if this registry has no per-acquisition TTL
     */
    default Optional<Lease> tryAcquire(String name, Duration ttl) {
        throw new UnsupportedOperationException(getClass().getName() + " has no per-acquisition TTL");
    }

    /**
     * Like {@link #acquire(String, Duration)}, with a TTL of this acquisition's own (see {@link #tryAcquire(String, Duration)}).
     *
     * @throws UnsupportedOperationException if this registry has no per-acquisition TTL
     */
    default Lease acquire(String name, Duration maxWait, Duration ttl) throws InterruptedException {
        throw new UnsupportedOperationException(getClass().getName() + " has no per-acquisition TTL");
    }

    /**
     * Like {@link #tryAcquire(String, Duration)}, for {@code owner}: a reentrant hold only if {@code owner} already
     * holds the name; while any other owner of this process holds it (a thread, or another invocation), the
     * answer is empty, as when another process holds it.
     *
     * @param ttl   the lease's TTL; null for the registry's
     * @param owner who the hold belongs to: {@link LockOwner#newInvocation} for work that may finish on another thread
     * @throws UnsupportedOperationException if this registry has no owners but threads
     */
    default Optional<Lease> tryAcquire(String name, Duration ttl, LockOwner owner) {
        throw new UnsupportedOperationException(getClass().getName() + " has no invocation owners");
    }

    /**
     * Like {@link #acquire(String, Duration, Duration)}, for {@code owner} (see
     * {@link #tryAcquire(String, Duration, LockOwner)}): while another owner of this process holds the name, this
     * waits as for another process.
     *
     * @param ttl   the lease's TTL; null for the registry's
     * @param owner who the hold belongs to
     * @throws UnsupportedOperationException if this registry has no owners but threads
     */
    default Lease acquire(String name, Duration maxWait, Duration ttl, LockOwner owner) throws InterruptedException {
        throw new UnsupportedOperationException(getClass().getName() + " has no invocation owners");
    }

    /**
     * Refreshes {@code lease} now and, if {@code ttl} is not null, makes it the lease's TTL from then on.
     *
     * @throws LockLostException             if the lease is lost or released
     * @throws GcsLockException              if GCS did not confirm the refresh now; the renewal then changed
     *                                       nothing (the lease keeps its TTL and keeps refreshing)
     * @throws UnsupportedOperationException if this registry cannot renew on demand
     */
    default void renew(Lease lease, Duration ttl) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot renew a lease on demand");
    }

    /**
     * Runs {@code action} under the lock and releases it afterwards, also when the action throws, and returns
     * its result. For work without a result use {@link #runWithLock}.
     *
     * @throws LockNotAcquiredException when the wait runs out
     */
    <T, E extends Exception> T withLock(String name, Duration maxWait, LockedCallable<T, E> action)
            throws E, InterruptedException;

    /**
     * Runs work without a result under the lock and releases it afterwards, also when the work throws:
     * {@code locks.runWithLock("invoices", Duration.ofSeconds(5), lease -> close(lease.fencingToken()))}.
     *
     * <p>It has a name of its own, like Spring's {@code TransactionTemplate.executeWithoutResult}: an overload of
     * {@link #withLock} would make every one-parameter lambda, {@code lease -> ...}, an ambiguous call.
     *
     * @throws LockNotAcquiredException when the wait runs out
     * @throws InterruptedException     if interrupted while waiting
     */
    default <E extends Exception> void runWithLock(String name, Duration maxWait, LockedRunnable<E> action)
            throws E, InterruptedException {
        Objects.requireNonNull(action, "action");
        withLock(name, maxWait, lease -> {
            action.run(lease);
            return null;
        });
    }

    /**
     * A {@link Lock} view of one name, for code written against {@code java.util.concurrent}.
     * {@code lock()} waits without limit, {@code tryLock()} (and {@code tryLock(time, unit)} with a time
     * of zero or less) makes one attempt, conditions are not supported. Every view of one name is the same
     * lock: {@code obtain(k).lock(); obtain(k).unlock()} works.
     */
    Lock obtain(String name);

    /** Reads the lock object of {@code name} (one GET); empty if nobody holds it. */
    Optional<LockInfo> inspect(String name);

    /** Every lock object under the registry's prefix (one list request per 1,000 locks). */
    List<LockInfo> list();

    /** The leases this registry holds now (healthy or lost but not yet released). */
    Collection<Lease> heldLeases();

    /**
     * Gives back the outermost hold of {@code lease} after {@code delay}, refreshing it until then ("hold at
     * least", so that instances whose schedules drift apart do not run a short job twice). A nested hold is given back at once.
     */
    void releaseAfter(Lease lease, Duration delay);

    /**
     * Deletes the lock object of {@code name} whoever holds it, only if it still has the given
     * generation ({@code fencingToken}) and metageneration, as read by {@link #inspect}. For
     * administrators; the holder finds out at its next refresh. If the holder is a lease of this very registry, the
     * delete waits until {@code writeRateWindow} has passed since that lease's last write (GCS refuses a second
     * write to one object within it).
     *
     * @return whether this call deleted it (false: it was gone or had changed)
     */
    boolean forceRelease(String name, long fencingToken, long metageneration);
}
