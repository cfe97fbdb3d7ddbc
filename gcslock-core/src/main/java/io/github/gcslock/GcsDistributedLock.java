package io.github.gcslock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A {@link Lock} view of one lock name. Each {@code lock()} by a thread must be paired with an
 * {@code unlock()} by the same thread; nested pairs are reentrant holds. Every view of one name from one
 * registry is the same lock: {@code obtain(k).lock(); obtain(k).unlock()} works (as with Spring
 * Integration's registries), because the holds live in the registry's {@link Holds}, not in the view.
 */
final class GcsDistributedLock implements Lock {

    private static final Duration FOREVER = Duration.ofDays(365 * 100);

    private final LockRegistry registry;
    private final String name;
    private final Holds holds;

    GcsDistributedLock(LockRegistry registry, String name, Holds holds) {
        this.registry = registry;
        this.name = name;
        this.holds = holds;
    }

    /**
     * The leases that threads took through the lock views of one registry, per thread and name. A thread
     * keeps entries only for the names it holds now, so pooled threads do not accumulate names.
     */
    static final class Holds {
        private final ThreadLocal<Map<String, Deque<Lease>>> byThread = ThreadLocal.withInitial(HashMap::new);

        void push(String name, Lease lease) {
            byThread.get().computeIfAbsent(name, n -> new ArrayDeque<>()).push(lease);
        }

        /** The current thread's latest hold of {@code name}, removed; null if it holds none. */
        Lease pop(String name) {
            Map<String, Deque<Lease>> mine = byThread.get();
            Deque<Lease> stack = mine.get(name);
            Lease lease = stack == null ? null : stack.poll();
            if (stack != null && stack.isEmpty()) {
                mine.remove(name);
                if (mine.isEmpty()) {
                    byThread.remove();
                }
            }
            return lease;
        }
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        while (true) {
            try {
                holds.push(name, registry.acquire(name, FOREVER));
                break;
            } catch (InterruptedException e) {
                interrupted = true; // lock() is not interruptible by contract; remember and go on
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        holds.push(name, registry.acquire(name, FOREVER));
    }

    @Override
    public boolean tryLock() {
        Optional<Lease> lease = registry.tryAcquire(name);
        lease.ifPresent(l -> holds.push(name, l));
        return lease.isPresent();
    }

    /** Waits up to {@code time}; a time of zero or less means one attempt without waiting ({@link Lock}'s contract). */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        try {
            holds.push(name, registry.acquire(name, Duration.ofNanos(Math.max(0, unit.toNanos(time)))));
            return true;
        } catch (LockNotAcquiredException e) {
            return false;
        }
    }

    @Override
    public void unlock() {
        Lease lease = holds.pop(name);
        if (lease == null) {
            throw new IllegalMonitorStateException("lock '" + name + "' is not held by this thread");
        }
        lease.release();
    }

    /** Not supported: a distributed lock has no condition variables. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("conditions are not supported by GCS locks");
    }

    @Override
    public String toString() {
        return "GcsDistributedLock[" + name + "]";
    }
}
