package io.github.gcslock;

import java.time.Duration;
import java.util.Optional;

/**
 * The lock could not be acquired within the allowed wait: someone else holds it (see {@link #holder()}),
 * or, when {@link #getCause()} is set, GCS kept failing until the wait ran out.
 */
public class LockNotAcquiredException extends GcsLockException {

    private final transient LockInfo holder;
    private final Duration waited;

    public LockNotAcquiredException(String lockName, Duration waited, LockInfo holder, Throwable lastError) {
        this(lockName, waited, holder, lastError, false);
    }

    /** {@code heldElsewhere}: another process holds it though it was not read (its create beat ours just now). */
    LockNotAcquiredException(String lockName, Duration waited, LockInfo holder, Throwable lastError, boolean heldElsewhere) {
        super(lockName, message(lockName, waited, holder, lastError, heldElsewhere), lastError);
        this.holder = holder;
        this.waited = waited;
    }

    /**
     * A wait that made no request (rule 16): this process saw the name held recently (by {@code holder}, or by
     * another process whose create beat ours) and its next look was not due within the wait.
     */
    static LockNotAcquiredException noLookDue(String lockName, Duration waited, LockInfo holder) {
        return new LockNotAcquiredException(lockName, waited, holder, "lock '" + lockName + "' not acquired within "
                + waited + ": this process saw it held by " + (holder != null ? holder.owner() : "another process")
                + " recently and its next look was not due within the wait, so no request was made");
    }

    private LockNotAcquiredException(String lockName, Duration waited, LockInfo holder, String message) {
        super(lockName, message, null);
        this.holder = holder;
        this.waited = waited;
    }

    private static String message(String name, Duration waited, LockInfo holder, Throwable lastError, boolean heldElsewhere) {
        StringBuilder sb = new StringBuilder("lock '").append(name).append("' not acquired within ").append(waited);
        if (holder != null) {
            sb.append(": held by ").append(holder.owner());
            if (holder.expires() != null) {
                sb.append(" (holder's expiry estimate ").append(holder.expires()).append(')');
            }
        } else if (heldElsewhere && lastError == null) {
            sb.append(": another process holds it (it created the lock object just before us)");
        } else if (lastError == null) {
            sb.append(": another thread of this process holds it");
        }
        if (lastError != null) {
            sb.append(holder != null ? "; " : ": ").append("last GCS error: ").append(lastError.getMessage());
        }
        return sb.toString();
    }

    /** The holder seen last, if the lock was seen held. */
    public Optional<LockInfo> holder() {
        return Optional.ofNullable(holder);
    }

    /** How long the caller was prepared to wait. */
    public Duration waited() {
        return waited;
    }
}
