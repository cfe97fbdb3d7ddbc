package io.github.gcslock;

/** Told once when a lease is lost. Runs on the registry's scheduler thread or the thread that noticed: keep it short. */
@FunctionalInterface
public interface LeaseLostListener {
    void leaseLost(Lease lease, LockLostException reason);
}
