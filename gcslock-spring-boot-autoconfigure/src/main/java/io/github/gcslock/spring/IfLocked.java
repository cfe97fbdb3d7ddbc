package io.github.gcslock.spring;

/** What a {@link GcsLocked} method does when the lock is held elsewhere. */
public enum IfLocked {
    /** Do not run; return {@code null}, an empty {@code Optional}, or a primitive's zero value (ShedLock's behaviour). */
    SKIP,
    /**
     * Wait for the lock: up to {@code maxWait} when given, else without limit; then throw
     * {@link io.github.gcslock.LockNotAcquiredException}. If the waiting thread is interrupted, throw
     * {@link GcsLockInterruptedException} with the interrupt flag set again (also in the other modes
     * when they wait for a {@code maxWait}).
     */
    WAIT,
    /** Throw {@link io.github.gcslock.LockNotAcquiredException} (after {@code maxWait}, if given). */
    FAIL
}
