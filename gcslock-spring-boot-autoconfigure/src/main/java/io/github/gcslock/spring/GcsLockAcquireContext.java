package io.github.gcslock.spring;

import io.micrometer.observation.Observation;

/**
 * What an acquisition observation ({@code gcslock.acquisition}) knows: the lock name, the mode
 * ({@code try}: one attempt, {@code wait}: waiting up to a limit) and, once it ended, the outcome
 * ({@code acquired}, {@code busy}, {@code timeout}, {@code error}).
 */
public class GcsLockAcquireContext extends Observation.Context {

    private final String lockName;
    private final String mode;
    private volatile String outcome;

    public GcsLockAcquireContext(String lockName, String mode) {
        this.lockName = lockName;
        this.mode = mode;
    }

    public String getLockName() {
        return lockName;
    }

    /** {@code try} or {@code wait}; {@code unknown} when the call failed before it started asking. */
    public String getMode() {
        return mode;
    }

    /** {@code acquired}, {@code busy}, {@code timeout} or {@code error}; null while the acquisition runs. */
    public String getOutcome() {
        return outcome;
    }

    void setOutcome(String outcome) {
        this.outcome = outcome;
    }
}
