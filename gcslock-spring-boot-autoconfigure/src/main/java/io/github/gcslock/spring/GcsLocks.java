package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.github.gcslock.LockLostException;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/** Access to the lease of the innermost {@link GcsLocked} method running on this thread. */
public final class GcsLocks {

    private static final ThreadLocal<Deque<Lease>> CURRENT = ThreadLocal.withInitial(ArrayDeque::new);

    private GcsLocks() {
    }

    /** The lease of the innermost {@code @GcsLocked} method on this thread, if any. */
    public static Optional<Lease> currentLease() {
        return Optional.ofNullable(CURRENT.get().peek());
    }

    /**
     * Throws if the current lease is no longer healthy; call between steps of long work.
     *
     * @throws LockLostException     if the lease was lost
     * @throws IllegalStateException if not called from within a {@code @GcsLocked} method
     */
    public static void checkHealthy() {
        currentLease().orElseThrow(() -> new IllegalStateException("no @GcsLocked method is running on this thread"))
                .checkHealthy();
    }

    static void push(Lease lease) {
        CURRENT.get().push(lease);
    }

    static void pop() {
        Deque<Lease> d = CURRENT.get();
        d.poll();
        if (d.isEmpty()) {
            CURRENT.remove();
        }
    }
}
