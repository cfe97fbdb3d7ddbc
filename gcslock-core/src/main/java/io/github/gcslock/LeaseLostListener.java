package io.github.gcslock;

/**
 * Told once when a lease is lost. Runs on the registry's listener threads (never on the threads that
 * refresh leases or enforce deadlines), after the lock's earlier events; it may block without delaying
 * any other lease, but it delays later events of the same lock.
 */
@FunctionalInterface
public interface LeaseLostListener {
    void leaseLost(Lease lease, LockLostException reason);
}
