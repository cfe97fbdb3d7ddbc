package io.github.gcslock.spring;

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
import java.util.concurrent.locks.ReentrantLock;

/**
 * Spring Integration's distributed lock registry backed by GCS locks: {@code LockRegistryLeaderInitiator}
 * leader election, {@code LockRequestHandlerAdvice} and aggregators get locks without a database or Redis.
 * Keys are turned into lock names with {@code toString()}.
 *
 * <p>Follows the conventions of Spring Integration's JDBC and Redis registries:
 * <ul>
 * <li>{@link #obtain} returns the same lock for the same key from a bounded cache; when the cache is
 * full, unused locks are evicted, never one that is held or waited for in this process (if all are,
 * {@link CannotAcquireLockException}); {@link #expireUnusedOlderThan} drops idle ones, never one held or waited for. A dropped ("orphaned")
 * lock object refuses {@code lock}/{@code tryLock} with {@link CannotAcquireLockException}, as the JDBC and Redis
 * registries do: obtain the key again.</li>
 * <li>Locks are reentrant per thread; a nested {@code lock}/{@code tryLock} by the holding thread costs no
 * GCS request (so {@code LockRegistryLeaderInitiator}'s heartbeat re-{@code tryLock} every 500 ms is free:
 * the lease refreshes itself in the background). A nested call that finds the lease lost forgets it — a
 * nested {@code tryLock} returns false, a nested {@code lock()} throws {@link ConcurrentModificationException}
 * (it never takes a fresh lease quietly) — and the next call competes for the lock afresh.</li>
 * <li>{@code tryLock(time, unit)} with a time of zero or less makes one attempt without waiting.</li>
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
            if (lock != null) {
                lock.lastUsed = System.currentTimeMillis(); // obtained to be used: not "unused" for expireUnusedOlderThan
            }
            if (lock == null) {
                locks.obtain(name); // validates the name now, naming it, rather than at the first lock()
                lock = new GcsLock(locks, name);
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

    /** Removes cached locks not used for {@code age} milliseconds that nobody in this process holds or waits for. */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        cacheLock.lock();
        try {
            cache.values().removeIf(lock -> now - lock.lastUsed >= age && lock.evictIfUnused());
        } finally {
            cacheLock.unlock();
        }
    }

    /** Evicts the least recently used locks not held here until the cache fits (never {@code keep}). */
    private void evictUnused(GcsLock keep) {
        for (Iterator<GcsLock> it = cache.values().iterator(); cache.size() > cacheCapacity && it.hasNext(); ) {
            GcsLock lock = it.next();
            if (lock != keep && lock.evictIfUnused()) {
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
        if (lock == null || !lock.isHeldByCurrentThread()) {
            throw new IllegalStateException("the current thread does not hold the lock '" + name + "', so it cannot renew it");
        }
        return lock;
    }

    @Override
    public String toString() {
        return "GcsIntegrationLockRegistry[" + locks + "]";
    }
}
