package io.github.gcslock;

/**
 * How a {@code tryAcquire} or {@code acquire} call ended, as told to {@link LockEventListener#acquireFinished}.
 * Reentrant holds are not acquisitions and have no outcome, except a call that became one because a listener took
 * the lock for its owner inside {@link LockEventListener#acquireStarted}: announced, it ends {@link #ACQUIRED}.
 */
public enum AcquireOutcome {

    /** The call got the lock. */
    ACQUIRED("acquired"),

    /** {@code tryAcquire} found the lock held (by another process, or by another thread of this one). */
    BUSY("busy"),

    /** {@code acquire}'s wait ran out before the lock was free ({@link LockNotAcquiredException}). */
    TIMEOUT("timeout"),

    /**
     * The call failed: GCS could not be asked (or kept failing), bad input (a bad name, a negative wait), a
     * closed registry, or an interrupt. The call threw.
     */
    ERROR("error");

    private final String label;

    AcquireOutcome(String label) {
        this.label = label;
    }

    /**
     * The lower-case word for this outcome ({@code acquired}, {@code busy}, {@code timeout}, {@code error}),
     * stable across releases: metrics and observations use it as a tag value, so dashboards keep working
     * if a constant is ever renamed.
     */
    public String label() {
        return label;
    }
}
