package io.github.gcslock;

/**
 * Base of gcslock's exceptions. Thrown as such when GCS could not be asked (unreachable, timed out,
 * 5xx/429 after retries, permission denied): the caller then does not know whether the lock is free,
 * and the message says so rather than pretending the lock was "not acquired". A one-shot acquisition cut short by
 * an interrupt of its thread throws it too, with an {@link InterruptedException} as its cause (the interrupt flag
 * set again): GCS did not fail, the caller stopped asking.
 */
public class GcsLockException extends RuntimeException {

    private final String lockName;

    public GcsLockException(String lockName, String message, Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
    }

    public GcsLockException(String lockName, String message) {
        this(lockName, message, null);
    }

    /** The lock this is about, or {@code null} when it concerns the registry as a whole. */
    public String lockName() {
        return lockName;
    }
}
