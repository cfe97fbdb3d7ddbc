package io.github.gcslock;

/**
 * Work without a result run under a lock by {@link LockRegistry#runWithLock}. Like {@link LockedCallable}, it
 * receives the lease, for {@link Lease#checkHealthy()} between steps and {@link Lease#fencingToken()} on writes.
 *
 * @param <E> the checked exception the work may throw
 */
@FunctionalInterface
public interface LockedRunnable<E extends Exception> {
    void run(Lease lease) throws E;
}
