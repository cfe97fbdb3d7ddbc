package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.github.gcslock.LockLostException;

/** A held lease was lost: work under it must stop. Alert on it, or run a fallback. */
public class GcsLockLostEvent extends GcsLockEvent {

    private final transient Lease lease;
    private final LockLostException reason;

    public GcsLockLostEvent(Object source, Lease lease, LockLostException reason) {
        super(source, lease.name());
        this.lease = lease;
        this.reason = reason;
    }

    public Lease lease() {
        return lease;
    }

    public LockLostException reason() {
        return reason;
    }
}
