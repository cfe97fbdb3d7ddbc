package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.Lease;
import io.github.gcslock.LockLostException;
import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.LockRegistry;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;

/**
 * One key's lock of {@link GcsIntegrationLockRegistry}, on one engine lease at a time: reentrant per thread
 * (nested calls cost no GCS request; a {@code Lock} belongs to a thread by contract, so the engine hold is the
 * thread's), a lease found lost is forgotten by the next nested call — a nested {@code tryLock} answers false, a
 * nested {@code lock()} throws {@link ConcurrentModificationException} — and reported by the final {@code unlock()}. Only the owner thread changes {@code owner}/{@code holds}/{@code lease} once
 * it has the engine's lease; other threads of this process queue in the engine (one contender per name).
 */
final class GcsLock implements DistributedLock {

    /** The wait of {@code lock()}: without limit. */
    private static final Duration FOREVER = Duration.ofDays(365 * 100);

    private final LockRegistry locks;
    private final String name;
    volatile long lastUsed = System.currentTimeMillis();
    private volatile Thread owner;
    private volatile Lease lease;
    private int holds; // touched by the owner only
    /** A thread whose lease was found lost by a nested call and forgotten: its final unlock() reports the loss. */
    private volatile Thread forgottenLoser;
    /** The release of a lease found lost, running in the background ({@link #forget}); the next acquisition waits for it. */
    private volatile Thread lostRelease;
    /** Threads inside an acquisition of this lock (queued in the engine, waiting): the lock is in use, never evicted. */
    private final AtomicInteger acquiring = new AtomicInteger();
    /** Dropped from the registry's cache (guarded by this): locking it is refused, as Spring Integration's registries do. */
    private boolean evicted;

    GcsLock(LockRegistry locks, String name) {
        this.locks = locks;
        this.name = name;
    }

    /**
     * Held here or waited for here: the cache must keep this instance, or the waiter, once it holds the lock,
     * would hold an instance that {@code obtain(key)} no longer returns ({@code renewLock(key)} would fail for it).
     */
    boolean isInUse() {
        return owner != null || acquiring.get() > 0;
    }

    /**
     * Marks this lock evicted unless it is held or waited for here; true if it may leave the cache. A lock object
     * the cache dropped ("orphaned") is refused from then on, so that nobody holds a lock that {@code obtain(key)}
     * no longer returns ({@code renewLock(key)} could not find it).
     */
    synchronized boolean evictIfUnused() {
        if (isInUse()) {
            return false;
        }
        evicted = true;
        return true;
    }

    /** A thread begins an acquisition: counted as a use (never evicted meanwhile), refused if already evicted. */
    private void enter() {
        synchronized (this) {
            if (evicted) {
                throw new CannotAcquireLockException("the lock object of '" + name + "' was evicted from the "
                        + "GcsIntegrationLockRegistry's cache (expireUnusedOlderThan or cacheCapacity) and can no longer be "
                        + "locked: obtain(key) it again");
            }
            acquiring.incrementAndGet();
        }
    }

    boolean isHeldByCurrentThread() {
        return owner == Thread.currentThread();
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

    /**
     * lock() must end holding the lock. A nested call that finds the outer hold lost throws instead of taking a
     * fresh lease: the caller's outer section would otherwise go on as if it had held the lock all along (and its
     * nested unlock() would release the fresh lease, leaving the rest of the section unlocked). The outer
     * unlock() then throws {@link ConcurrentModificationException} too; the next lock() competes afresh.
     */
    private void acquireUntilHeld(Duration ttl) throws InterruptedException {
        if (!acquire(FOREVER, ttl)) {
            throw lostException();
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
        enter();
        try {
            awaitLostRelease();
            acquired = locks.tryAcquire(name);
            acquired.ifPresent(this::own);
        } catch (GcsLockException e) {
            throw cannotAcquire(e);
        } finally {
            acquiring.decrementAndGet();
        }
        return acquired.isPresent();
    }

    /** Waits up to {@code time}; a time of zero or less makes one attempt without waiting ({@link java.util.concurrent.locks.Lock}'s contract). */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), null);
    }

    /** Waits up to {@code waitTime}; zero or less makes one attempt without waiting. */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        if (waitTime.isNegative()) {
            waitTime = Duration.ZERO; // the Lock contract: one attempt, not an error
        }
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
        enter();
        try {
            awaitLostRelease();
            acquired = ttl == null ? locks.acquire(name, maxWait) : locks.acquire(name, maxWait, ttl);
            own(acquired);
        } catch (LockNotAcquiredException e) {
            throw e;
        } catch (GcsLockException e) {
            throw cannotAcquire(e);
        } finally {
            acquiring.decrementAndGet();
        }
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
            // Frees the engine's slot; the guarded delete cannot touch a newer holder's object. Not on this thread:
            // the delete is bounded by the operation timeout, which can outlast the safety margin (at TTLs under
            // ~50 s), so a heartbeat that waited for it would report the loss (LockRegistryLeaderInitiator's
            // onRevoked) after another instance had taken over.
            // The next acquisition waits for it (awaitLostRelease): the name is not free before.
            Thread releaser = new Thread(lost::release, "gcslock-lost-release");
            releaser.setDaemon(true);
            lostRelease = releaser;
            releaser.start();
        }
    }

    /** Waits for the background release of a lost lease, if one is running (bounded by the operation timeout). */
    private void awaitLostRelease() {
        Thread releaser = lostRelease;
        if (releaser == null) {
            return;
        }
        boolean interrupted = false;
        while (releaser.isAlive()) {
            try {
                releaser.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
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
