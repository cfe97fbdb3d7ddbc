package io.github.gcslock;

/**
 * A lease is no longer held: its lock object was deleted or taken over, refreshes failed too often,
 * or no refresh was confirmed before the deadline. Work protected by the lease must stop; anything it
 * writes should carry the fencing token so that a newer holder's writes win.
 */
public class LockLostException extends GcsLockException {

    private final long fencingToken;

    public LockLostException(String lockName, long fencingToken, String reason) {
        super(lockName, "lease on lock '" + lockName + "' (fencing token " + fencingToken + ") was lost: " + reason);
        this.fencingToken = fencingToken;
    }

    /** The fencing token of the lost lease. */
    public long fencingToken() {
        return fencingToken;
    }
}
