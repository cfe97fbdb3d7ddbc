package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.Lease;
import io.github.gcslock.LockLostException;
import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.LockRegistry;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Spring Integration's distributed lock registry backed by GCS locks: {@code LockRegistryLeaderInitiator}
 * leader election, {@code LockRequestHandlerAdvice} and aggregators get locks without a database or Redis.
 * Keys are turned into lock names with {@code toString()}.
 *
 * <p>Follows the conventions of Spring Integration's JDBC and Redis registries:
 * <ul>
 * <li>{@link #obtain} returns the same lock for the same key from a bounded cache; when the cache is
 * full, unused locks are evicted, never one that is held in this process (if all are held,
 * {@link CannotAcquireLockException}); {@link #expireUnusedOlderThan} drops idle ones.</li>
 * <li>Locks are reentrant per thread; a nested {@code lock}/{@code tryLock} by the holding thread costs no
 * GCS request (so {@code LockRegistryLeaderInitiator}'s heartbeat re-{@code tryLock} every 500 ms is free:
 * the lease refreshes itself in the background). A nested call that finds the lease lost returns
 * false and forgets it, so that the next call competes for the lock afresh.</li>
 * <li>{@code unlock()} by a thread that does not hold the lock throws {@link IllegalStateException}; the
 * last {@code unlock()} of a lock that was lost meanwhile (taken over, deleted, refreshes failed) throws
 * {@link ConcurrentModificationException}: the work it protected may have overlapped with another holder's.</li>
 * <li>GCS failures while locking throw {@link CannotAcquireLockException} (nothing is held then).</li>
 * <li>{@link DistributedLock#lock(Duration)} / {@link DistributedLock#tryLock(Duration, Duration)} acquire
 * with their own TTL, stored in the lock object so that other instances judge its staleness by it;
 * {@link #renewLock(Object, Duration)} changes the TTL of a held lock. The plain methods use the engine's TTL.</li>
 * </ul>
 */
public class GcsIntegrationLockRegistry implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {

    /** Default bound of the lock cache, as in Spring Integration's own registries. */
    public static final int DEFAULT_CACHE_CAPACITY = 100_000;

    private static final Duration FOREVER = Duration.ofDays(365 * 100);

    private final LockRegistry locks;
    private final ReentrantLock cacheLock = new ReentrantLock();
    /** Access-ordered, so eviction starts with the least recently obtained. Guarded by {@link #cacheLock}. */
    private final Map<String, GcsLock> cache = new LinkedHashMap<>(16, 0.75f, true);
    private volatile int cacheCapacity = DEFAULT_CACHE_CAPACITY;

    public GcsIntegrationLockRegistry(LockRegistry locks) {
        this.locks = Objects.requireNonNull(locks, "locks");
    }

    /** Bounds the lock cache (default {@value #DEFAULT_CACHE_CAPACITY}); locks held in this process are never evicted. */
    public void setCacheCapacity(int cacheCapacity) {
        if (cacheCapacity < 1) {
            throw new IllegalArgumentException("cacheCapacity must be at least 1, got " + cacheCapacity);
        }
        this.cacheCapacity = cacheCapacity;
        cacheLock.lock();
        try {
            evictUnused(null);
        } finally {
            cacheLock.unlock();
        }
    }

    /**
     * The lock of {@code lockKey} ({@code toString()} is the lock name): the same instance for the same key
     * while it stays cached.
     *
     * @throws CannotAcquireLockException if the cache is full of locks held in this process
     * @throws IllegalArgumentException   if the key is not a valid lock name
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        String name = String.valueOf(Objects.requireNonNull(lockKey, "lockKey"));
        cacheLock.lock();
        try {
            GcsLock lock = cache.get(name);
            if (lock == null) {
                locks.obtain(name); // validates the name now, naming it, rather than at the first lock()
                lock = new GcsLock(name);
                cache.put(name, lock);
                if (cache.size() > cacheCapacity) {
                    evictUnused(lock);
                    if (cache.size() > cacheCapacity) {
                        cache.remove(name);
                        throw new CannotAcquireLockException("all " + cacheCapacity + " cached GCS locks are held in this "
                                + "process; cannot obtain '" + name + "' now (raise cacheCapacity)");
                    }
                }
            }
            return lock;
        } finally {
            cacheLock.unlock();
        }
    }

    /** Removes cached locks not used for {@code age} milliseconds that nobody in this process holds. */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        cacheLock.lock();
        try {
            cache.values().removeIf(lock -> now - lock.lastUsed >= age && !lock.isHeldInThisProcess());
        } finally {
            cacheLock.unlock();
        }
    }

    /** Evicts the least recently used locks not held here until the cache fits (never {@code keep}). */
    private void evictUnused(GcsLock keep) {
        for (Iterator<GcsLock> it = cache.values().iterator(); cache.size() > cacheCapacity && it.hasNext(); ) {
            GcsLock lock = it.next();
            if (lock != keep && !lock.isHeldInThisProcess()) {
                it.remove();
            }
        }
    }

    /**
     * Refreshes the lock of {@code lockKey} now (one GCS request), keeping its TTL.
     *
     * @throws IllegalStateException if the current thread does not hold it, or it could not be renewed (lost)
     */
    @Override
    public void renewLock(Object lockKey) {
        heldByCurrentThread(lockKey).renew(null);
    }

    /**
     * Refreshes the lock of {@code lockKey} now with a new TTL, stored in the lock object for other instances
     * to judge it by; its refresh interval and deadline follow the new TTL.
     *
     * @throws IllegalStateException if the current thread does not hold it, or it could not be renewed (lost)
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        heldByCurrentThread(lockKey).renew(ttl);
    }

    private GcsLock heldByCurrentThread(Object lockKey) {
        String name = String.valueOf(Objects.requireNonNull(lockKey, "lockKey"));
        GcsLock lock;
        cacheLock.lock();
        try {
            lock = cache.get(name);
        } finally {
            cacheLock.unlock();
        }
        if (lock == null || lock.owner != Thread.currentThread()) {
            throw new IllegalStateException("the current thread does not hold the lock '" + name + "', so it cannot renew it");
        }
        return lock;
    }

    @Override
    public String toString() {
        return "GcsIntegrationLockRegistry[" + locks + "]";
    }

    /**
     * One key's lock. Only the owner thread changes {@code owner}/{@code holds}/{@code lease} once it has
     * the engine's lease; other threads of this process queue in the engine (one contender per name).
     */
    private final class GcsLock implements DistributedLock {

        private final String name;
        volatile long lastUsed = System.currentTimeMillis();
        private volatile Thread owner;
        private volatile Lease lease;
        private int holds; // touched by the owner only
        /** A thread whose lease was found lost by a nested call and forgotten: its final unlock() reports the loss. */
        private volatile Thread forgottenLoser;

        GcsLock(String name) {
            this.name = name;
        }

        boolean isHeldInThisProcess() {
            return owner != null;
        }

        @Override
        public void lock() {
            lock(null);
        }

        @Override
        public void lock(Duration ttl) {
            boolean interrupted = false;
            while (true) {
                try {
                    acquireUntilHeld(ttl);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // lock() is not interruptible by contract; remember and go on
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        /** lock() must end holding the lock: a nested call that found the lease lost competes afresh. */
        private void acquireUntilHeld(Duration ttl) throws InterruptedException {
            if (!acquire(FOREVER, ttl)) {
                acquire(FOREVER, ttl);
            }
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            acquireUntilHeld(null);
        }

        @Override
        public boolean tryLock() {
            if (reenter()) {
                return owner == Thread.currentThread();
            }
            Optional<Lease> acquired;
            try {
                acquired = locks.tryAcquire(name);
            } catch (GcsLockException e) {
                throw cannotAcquire(e);
            }
            acquired.ifPresent(this::own);
            return acquired.isPresent();
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return tryLock(Duration.ofNanos(unit.toNanos(time)), null);
        }

        @Override
        public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
            Objects.requireNonNull(waitTime, "waitTime");
            try {
                return acquire(waitTime, ttl);
            } catch (LockNotAcquiredException e) {
                if (e.holder().isEmpty() && e.getCause() != null) {
                    throw cannotAcquire(e); // GCS kept failing for the whole wait: unknown, not "held by another"
                }
                return false;
            }
        }

        /**
         * Waits up to {@code maxWait}; true when held, false when a nested call found this thread's lease lost
         * (it is forgotten then, and the next call competes afresh). Throws LockNotAcquiredException when the
         * wait ran out.
         */
        private boolean acquire(Duration maxWait, Duration ttl) throws InterruptedException {
            if (reenter()) {
                return owner == Thread.currentThread();
            }
            Lease acquired;
            try {
                acquired = ttl == null ? locks.acquire(name, maxWait) : locks.acquire(name, maxWait, ttl);
            } catch (LockNotAcquiredException e) {
                throw e;
            } catch (GcsLockException e) {
                throw cannotAcquire(e);
            }
            own(acquired);
            return true;
        }

        /**
         * A nested acquisition by the owner thread: counted locally, no GCS request. Returns false if this
         * thread does not hold the lock. If the lease turns out to be lost, the hold is forgotten (the lease
         * released, so the name is free for a fresh acquisition) and true is returned with no owner: a
         * nested call that finds the lock lost answers "not held" rather than quietly taking a new lease
         * (LockRegistryLeaderInitiator then revokes leadership, and competes again on its next beat).
         */
        private boolean reenter() {
            if (owner != Thread.currentThread()) {
                return false;
            }
            Lease current = lease;
            if (current != null && current.isHealthy()) {
                holds++;
                lastUsed = System.currentTimeMillis();
                return true;
            }
            forget(current);
            return true;
        }

        private void forget(Lease lost) {
            forgottenLoser = Thread.currentThread();
            holds = 0;
            lease = null;
            owner = null;
            if (lost != null) {
                lost.release(); // frees the engine's slot; the guarded delete cannot touch a newer holder's object
            }
        }

        private void own(Lease acquired) {
            lease = acquired;
            holds = 1;
            forgottenLoser = null;
            owner = Thread.currentThread();
            lastUsed = System.currentTimeMillis();
        }

        @Override
        public void unlock() {
            if (owner != Thread.currentThread()) {
                if (forgottenLoser == Thread.currentThread()) {
                    forgottenLoser = null;
                    throw lostException();
                }
                throw new IllegalStateException("the current thread does not hold the lock '" + name + "'");
            }
            if (--holds > 0) {
                return;
            }
            Lease current = lease;
            lease = null;
            owner = null;
            lastUsed = System.currentTimeMillis();
            boolean healthy = current.isHealthy();
            current.release();
            if (!healthy) {
                throw lostException();
            }
        }

        private ConcurrentModificationException lostException() {
            return new ConcurrentModificationException("the GCS lock '" + name + "' was lost while held (taken over, "
                    + "deleted or no longer refreshed); the integrity of the data it protected may have been compromised");
        }

        void renew(Duration ttl) {
            Lease current = lease;
            try {
                if (current == null) {
                    throw new LockLostException(name, 0, "not held");
                }
                locks.renew(current, ttl);
            } catch (GcsLockException e) {
                throw new IllegalStateException("could not renew the GCS lock '" + name + "': " + e.getMessage(), e);
            }
            lastUsed = System.currentTimeMillis();
        }

        private CannotAcquireLockException cannotAcquire(GcsLockException e) {
            return new CannotAcquireLockException("failed to lock '" + name + "': " + e.getMessage(), e);
        }

        /** Not supported: a distributed lock has no condition variables. */
        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("conditions are not supported by GCS locks");
        }

        @Override
        public String toString() {
            return "GcsLock[" + name + (owner != null ? ", held by " + owner.getName() : "") + "]";
        }
    }
}
