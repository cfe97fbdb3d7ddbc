package io.github.gcslock;

/**
 * How an acquisition asks for its lock, as told to {@link LockEventListener#acquireStarted}.
 *
 * @see AcquireOutcome
 */
public enum AcquireMode {

    /** {@code tryAcquire}: one attempt, no wait. */
    TRY("try"),

    /** {@code acquire}: attempts until the lock is acquired or the wait runs out. */
    WAIT("wait");

    private final String label;

    AcquireMode(String label) {
        this.label = label;
    }

    /**
     * The lower-case word for this mode ({@code try}, {@code wait}), stable across releases: metrics and
     * observations use it as a tag value, so dashboards keep working if a constant is ever renamed.
     */
    public String label() {
        return label;
    }
}
