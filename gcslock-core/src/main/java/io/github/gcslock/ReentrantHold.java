package io.github.gcslock;

import java.time.Instant;
import java.util.Optional;

/** A nested hold of a lease by the thread that holds it. Releasing it gives back one hold. */
final class ReentrantHold implements Lease {
    private final GcsLease lease;
    private volatile boolean released;

    ReentrantHold(GcsLease lease) {
        this.lease = lease;
    }

    /** The outermost hold's lease, which this hold shares. */
    GcsLease lease() {
        return lease;
    }

    @Override public String name() { return lease.name(); }
    @Override public long fencingToken() { return lease.fencingToken(); }
    @Override public String leaseId() { return lease.leaseId(); }
    @Override public Instant acquiredAt() { return lease.acquiredAt(); }
    @Override public Instant lastRefreshAt() { return lease.lastRefreshAt(); }
    @Override public Instant expiresAt() { return lease.expiresAt(); }
    @Override public boolean isHealthy() { return !released && lease.isHealthy(); }
    @Override public void checkHealthy() {
        if (released) {
            throw new LockLostException(lease.name(), lease.fencingToken(), "this hold was released");
        }
        lease.checkHealthy();
    }
    @Override public Optional<String> lostReason() { return lease.lostReason(); }
    @Override public Lease onLost(LeaseLostListener listener) {
        lease.onLost(listener);
        return this;
    }
    @Override public synchronized void release() {
        if (!released) {
            released = true;
            lease.releaseReentrantHold();
        }
    }
    @Override public String toString() { return "ReentrantHold[" + lease + "]"; }
}
