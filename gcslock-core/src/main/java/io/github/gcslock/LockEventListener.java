package io.github.gcslock;

/**
 * Told about what the registry does, for metrics, events and logs. Every method has an empty default.
 * Called on the thread that did the work (a caller's, or the refresh scheduler's): keep it short
 * and do not throw (exceptions are logged and ignored).
 */
public interface LockEventListener {

    /**
     * A {@code tryAcquire} ({@code mode} {@code try}) or {@code acquire} ({@code wait}) call starts asking
     * for the lock: called synchronously on the calling thread once the call is known not to be a
     * reentrant hold, before any wait or GCS request. {@link #acquireFinished} always follows for the
     * same call (for tracing: the wait between the two is the acquisition's).
     */
    default void acquireStarted(String name, String mode) {
    }

    /**
     * A {@code tryAcquire} or {@code acquire} call ended (not for reentrant holds). Also called without a
     * preceding {@link #acquireStarted} when the call failed before asking (bad input, closed registry).
     *
     * @param outcome {@code acquired}; {@code busy} (tryAcquire found it held); {@code timeout}
     *                (acquire's wait ran out); {@code error} (GCS could not be asked, or bad input)
     */
    default void acquireFinished(String name, String outcome, java.time.Duration took) {
    }

    /** A lease was acquired (not for reentrant holds). */
    default void acquired(Lease lease) {
    }

    /** An attempt ended without the lock because someone else holds it. */
    default void notAcquired(String name, LockInfo holder) {
    }

    /** A stale lock object (its holder stopped refreshing) was deleted so that it could be taken over. */
    default void tookOver(String name, LockInfo staleHolder) {
    }

    /** A refresh was confirmed by GCS. */
    default void refreshed(Lease lease) {
    }

    /** A refresh failed with a transient error; the lease stays healthy until failures reach the limit. */
    default void refreshFailed(Lease lease, Exception error) {
    }

    /** A lease was lost. */
    default void lost(Lease lease, LockLostException reason) {
    }

    /** A lease was released (its lock object deleted, or found already gone or taken over). */
    default void released(Lease lease) {
    }
}
