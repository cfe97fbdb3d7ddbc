package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;

import java.lang.reflect.Method;

/**
 * The thread calling a {@link GcsLocked} method was interrupted while waiting for the lock (a
 * {@link IfLocked#WAIT} method, or any mode with a {@code maxWait}). The method did not run and the
 * lock is not held; the thread's interrupt flag is set again before this is thrown, so code further
 * up (an executor shutting down, a {@code @Scheduled} task being cancelled) still sees the interrupt.
 * Unchecked, because annotated methods do not declare {@link InterruptedException}; the cause is the
 * original {@code InterruptedException}.
 */
public class GcsLockInterruptedException extends GcsLockException {

    /**
     * @param lockName the lock that was being waited for
     * @param method   the annotated method that did not run
     * @param cause    the interrupt
     */
    public GcsLockInterruptedException(String lockName, Method method, InterruptedException cause) {
        super(lockName, "interrupted while waiting for lock '" + lockName + "' of @GcsLocked "
                + LockNameResolver.describe(method) + "; the method did not run", cause);
    }
}
