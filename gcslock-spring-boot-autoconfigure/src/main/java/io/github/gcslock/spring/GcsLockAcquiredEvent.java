package io.github.gcslock.spring;

import io.github.gcslock.Lease;

/** A lock was acquired (not published for reentrant holds). */
public class GcsLockAcquiredEvent extends GcsLockEvent {

    private final transient Lease lease;

    public GcsLockAcquiredEvent(Object source, Lease lease) {
        super(source, lease.name());
        this.lease = lease;
    }

    public Lease lease() {
        return lease;
    }
}
