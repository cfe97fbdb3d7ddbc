package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.micrometer.observation.Observation;

/**
 * What a hold observation ({@code gcslock.hold}) knows: the lease, from its acquisition until it was
 * released or lost, and which of the two ended it.
 */
public class GcsLockHoldContext extends Observation.Context {

    private final Lease lease;
    private volatile String outcome;

    public GcsLockHoldContext(Lease lease) {
        this.lease = lease;
    }

    public Lease getLease() {
        return lease;
    }

    /** {@code released} or {@code lost}; null while the lock is held. */
    public String getOutcome() {
        return outcome;
    }

    void setOutcome(String outcome) {
        this.outcome = outcome;
    }
}
