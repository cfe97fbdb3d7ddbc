package io.github.gcslock;

/**
 * Work run under a lock by {@link LockRegistry#withLock}. It receives the lease so that long work can
 * call {@link Lease#checkHealthy()} between steps and tag its writes with {@link Lease#fencingToken()}.
 *
 * @param <T> the result
 * @param <E> the checked exception the work may throw
 */
@FunctionalInterface
public interface LockedCallable<T, E extends Exception> {
    T call(Lease lease) throws E;
}
