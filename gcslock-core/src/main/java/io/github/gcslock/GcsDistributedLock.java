package io.github.gcslock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A {@link Lock} view of one lock name. Each {@code lock()} by a thread must be paired with an
 * {@code unlock()} by the same thread; nested pairs are reentrant holds.
 */
final class GcsDistributedLock implements Lock {

    private static final Duration FOREVER = Duration.ofDays(365 * 100);

    private final LockRegistry registry;
    private final String name;
    private final ThreadLocal<Deque<Lease>> held = ThreadLocal.withInitial(ArrayDeque::new);

    GcsDistributedLock(LockRegistry registry, String name) {
        this.registry = registry;
        this.name = name;
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        while (true) {
            try {
                held.get().push(registry.acquire(name, FOREVER));
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
        held.get().push(registry.acquire(name, FOREVER));
    }

    @Override
    public boolean tryLock() {
        Optional<Lease> lease = registry.tryAcquire(name);
        lease.ifPresent(held.get()::push);
        return lease.isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        try {
            held.get().push(registry.acquire(name, Duration.ofNanos(unit.toNanos(time))));
            return true;
        } catch (LockNotAcquiredException e) {
            return false;
        }
    }

    @Override
    public void unlock() {
        Lease lease = held.get().poll();
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
