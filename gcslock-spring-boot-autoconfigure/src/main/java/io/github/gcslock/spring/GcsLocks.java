package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.github.gcslock.LockLostException;
import io.github.gcslock.LockOwner;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/** Access to the lease of the innermost {@link GcsLocked} method running on this thread. */
public final class GcsLocks {

    /**
     * A hold this thread is inside: a plain method's (owner null: the thread's own) or the synchronous part of a
     * method whose hold belongs to an invocation (a future's body before it returns, a publisher's assembly).
     */
    private record Held(Lease lease, LockOwner owner) {
    }

    private static final ThreadLocal<Deque<Held>> CURRENT = ThreadLocal.withInitial(ArrayDeque::new);

    private GcsLocks() {
    }

    /** The lease of the innermost {@code @GcsLocked} method on this thread, if any. */
    public static Optional<Lease> currentLease() {
        Held held = CURRENT.get().peek();
        return Optional.ofNullable(held != null ? held.lease() : null);
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

    /** This thread now runs inside {@code lease}'s hold, which belongs to {@code owner} (null: to the thread). */
    static void push(Lease lease, LockOwner owner) {
        CURRENT.get().push(new Held(lease, owner));
    }

    /**
     * Whether this thread runs inside a hold of {@code name} (its own, or an invocation's synchronous part): a
     * future or publisher call of the name that would WAIT there would wait for itself.
     */
    static boolean inside(String name) {
        for (Held h : CURRENT.get()) {
            if (h.lease().name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The invocation whose synchronous part this thread runs inside a hold of {@code name} (innermost), or null:
     * a plain {@code @GcsLocked} call of the name made there re-enters that invocation's hold (rule 17: the
     * thread that runs an invocation's synchronous part is inside its hold).
     */
    static LockOwner invocationHolding(String name) {
        for (Held h : CURRENT.get()) {
            if (h.lease().name().equals(name)) {
                return h.owner();
            }
        }
        return null;
    }

    static void pop() {
        Deque<Held> d = CURRENT.get();
        d.poll();
        if (d.isEmpty()) {
            CURRENT.remove();
        }
    }
}
