package io.github.gcslock.spring;

import java.time.Duration;

/**
 * Told how the acquisition of each {@link GcsLocked} call ended, in terms of the method's
 * {@link IfLocked} mode (the registry's own {@code LockEventListener.acquireFinished} only knows that a
 * {@code tryAcquire} found the lock busy or an {@code acquire} timed out, whatever the caller does
 * next). Both calls are made on the calling thread, nested (reentrant) calls included; the registry's
 * own report of the same acquisition, if any (none for a nested hold), comes between them.
 * Exceptions thrown here are logged and ignored.
 *
 * <p>Outcomes: {@code acquired}; {@code skipped} ({@code SKIP}: held elsewhere, the method did not run);
 * {@code refused} ({@code FAIL}: held elsewhere, {@code LockNotAcquiredException} thrown);
 * {@code timeout} ({@code WAIT}: {@code maxWait} ran out, {@code LockNotAcquiredException} thrown);
 * {@code interrupted} ({@link GcsLockInterruptedException} thrown); {@code error} (GCS could not be
 * asked, or kept failing until the wait ran out: the exception is thrown, except that a {@code SKIP}
 * method does not run and the failure is logged).
 */
public interface GcsLockedAcquireListener {

    /** The call is about to ask the registry for {@code lockName}. */
    default void acquiring(String lockName) {
    }

    /** The call's acquisition ended with {@code outcome} after {@code took}. */
    void acquireFinished(String lockName, IfLocked mode, String outcome, Duration took);
}
