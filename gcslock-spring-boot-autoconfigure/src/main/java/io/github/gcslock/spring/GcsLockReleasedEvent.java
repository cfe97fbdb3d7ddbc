package io.github.gcslock.spring;

import io.github.gcslock.Lease;

/** A lock was released. */
public class GcsLockReleasedEvent extends GcsLockEvent {

    private final transient Lease lease;

    public GcsLockReleasedEvent(Object source, Lease lease) {
        super(source, lease.name());
        this.lease = lease;
    }

    public Lease lease() {
        return lease;
    }
}
