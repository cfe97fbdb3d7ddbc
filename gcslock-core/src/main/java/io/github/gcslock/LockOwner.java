package io.github.gcslock;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Who a hold of a lock belongs to inside this process (DESIGN.md rule 17). Asking again for a name that its
 * owner already holds is a reentrant hold (counted locally, no GCS request); any other owner finds the name
 * held, exactly as another process would, and SKIPs, fails or waits.
 *
 * <ul>
 * <li>{@link #currentThread()}: the thread. The owner of the plain {@code tryAcquire}/{@code acquire} calls:
 * for synchronous code, where the work ends on the thread that started it, nested calls of one thread are
 * reentrant.</li>
 * <li>{@link #newInvocation(String)}: one invocation — a call whose work may finish on another thread
 * (a {@code CompletionStage}, a Reactor publisher, a callback, a ShedLock task). Its hold is never entered by a
 * thread that merely happens to run code for it, nor by another invocation; only code that passes this very
 * owner again gets a reentrant hold. Create a new owner per invocation and never share it between two.</li>
 * </ul>
 *
 * <p>An owner only decides reentrancy. Giving a hold back does not depend on the thread: {@link Lease#release()}
 * may be called from any thread (the one that completes the future, for example).
 */
public final class LockOwner {

    private static final AtomicLong INVOCATIONS = new AtomicLong();

    /** The thread of a thread owner; null for an invocation. */
    private final Thread thread;
    private final String description;

    private LockOwner(Thread thread, String description) {
        this.thread = thread;
        this.description = description;
    }

    /** The calling thread as an owner: what the plain acquire calls use. Equal to every other owner of the same thread. */
    public static LockOwner currentThread() {
        return new LockOwner(Thread.currentThread(), null);
    }

    /**
     * A new owner for one invocation, equal only to itself.
     *
     * @param description what the invocation is (e.g. the method), for messages and {@link #toString()}; may be null
     */
    public static LockOwner newInvocation(String description) {
        return new LockOwner(null, "invocation#" + INVOCATIONS.incrementAndGet() + (description != null ? " of " + description : ""));
    }

    /** Whether this owner is a thread (reentrant for that thread) rather than an invocation. */
    public boolean isThread() {
        return thread != null;
    }

    /** What the engine compares: the thread itself, or this invocation. */
    Object key() {
        return thread != null ? thread : this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        return o instanceof LockOwner other && thread != null && thread == other.thread;
    }

    @Override
    public int hashCode() {
        return thread != null ? Objects.hashCode(thread) : System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return thread != null ? "thread " + thread.getName() : description;
    }
}
