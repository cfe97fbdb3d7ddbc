package io.github.gcslock.shedlock;

import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockLostException;
import io.github.gcslock.LockOwner;
import io.github.gcslock.LockRegistry;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * ShedLock's {@link net.javacrumbs.shedlock.core.LockProvider} on the gcslock engine: each ShedLock lock
 * is a lock object in GCS, taken with one create-if-absent request and held by a refreshed lease.
 *
 * <p>ShedLock's semantics are kept exactly:
 * <ul>
 * <li>Not reentrant: while a name is held through this provider, {@code lock()} of that name returns empty,
 * from any thread, the holding thread included. Each {@code lock()} acquires for an invocation of its own
 * ({@link LockOwner#newInvocation}), which the engine never enters reentrantly; a name that the calling thread
 * holds through the engine (a {@code @GcsLocked} method) is "held" too.</li>
 * <li>{@code lockAtMostFor} is the longest the lock is held, also while its task is still running: the
 * provider releases it then, unless it was {@link SimpleLock#extend extended} (this provider is an
 * {@link ExtensibleLockProvider}, so ShedLock's {@code LockExtender} and {@code KeepAliveLockProvider} work).</li>
 * <li>{@code lockAtLeastFor} applies on unlock: the lock stays taken (and refreshed) until
 * {@code lockAtLeastUntil}, then it is released ({@link LockRegistry#releaseAfter}).</li>
 * <li>An instance that dies holding a lock stops refreshing it, and other instances take it over after the
 * shorter of {@code lockAtMostFor} and the registry's TTL: the lock is taken with that TTL of its own
 * ({@link LockRegistry#tryAcquire(String, Duration)}), stored in the lock object, and staleness is judged by
 * GCS's clock, not the local one. A {@code lockAtMostFor} under {@value #MINIMUM_TTL_MILLIS} ms still gives
 * a TTL of {@value #MINIMUM_TTL_MILLIS} ms (the lock is released at {@code lockAtMostFor} all the same).</li>
 * </ul>
 * Errors talking to GCS surface as ShedLock's {@link LockException}: ShedLock then skips the run and
 * logs it, as with its other providers.
 *
 * <p>{@link #close()} stops the lockAtMostFor timer and releases the locks still held.
 */
public final class GcsLockProvider implements ExtensibleLockProvider, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GcsLockProvider.class);

    /** The shortest TTL a lock is taken with, whatever its lockAtMostFor: shorter ones would be refreshed absurdly often. */
    public static final long MINIMUM_TTL_MILLIS = 1000;

    private final LockRegistry registry;
    /** Fires each lock's lockAtMostFor; one daemon thread (its tasks are a release each). */
    private final ScheduledExecutorService timer;
    /** The registry's TTL, the longest a lock is taken with; null if the registry does not tell. */
    private final Duration registryTtl;
    /**
     * The hold of each name taken through this provider: released by {@link #close()}, and a second
     * {@code lock()} of a held name returns empty without asking the engine (which would say "held" as well:
     * every lock() is an invocation of its own); an entry whose lease is no longer healthy no longer counts.
     */
    private final ConcurrentMap<String, Hold> holds = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** A provider on {@code registry}; the registry stays the caller's to close. */
    public GcsLockProvider(LockRegistry registry) {
        this(registry, newTimer());
    }

    /** With the timer that fires lockAtMostFor (tests stop it to leave a lock behind as a crash would). */
    GcsLockProvider(LockRegistry registry, ScheduledExecutorService timer) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.timer = Objects.requireNonNull(timer, "timer");
        this.registryTtl = registry instanceof GcsLockRegistry gcs ? gcs.ttl() : null;
    }

    private static ScheduledExecutorService newTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "gcslock-shedlock-timer");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /**
     * The TTL to take a lock with: its lockAtMostFor, but no longer than the registry's TTL (a live holder
     * refreshes; a crashed one frees the lock after the shorter of the two) and no shorter than the minimum.
     */
    Duration ttlFor(LockConfiguration configuration) {
        Duration ttl = configuration.getLockAtMostFor();
        Duration minimum = Duration.ofMillis(MINIMUM_TTL_MILLIS);
        if (ttl.compareTo(minimum) < 0) {
            ttl = minimum;
        }
        return registryTtl != null && ttl.compareTo(registryTtl) > 0 ? registryTtl : ttl;
    }

    /**
     * Takes the lock {@code configuration.getName()} if nobody holds it, without waiting.
     *
     * @return the lock, or empty if it is held (by another instance, or by this one through this
     * provider or by the calling thread through the engine)
     * @throws LockException if GCS could not be asked (then it is unknown whether the lock is free) or the
     *                       name cannot be a lock name
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Objects.requireNonNull(configuration, "lockConfiguration");
        if (closed) {
            throw new IllegalStateException("this GcsLockProvider is closed");
        }
        String name = configuration.getName();
        Hold current = holds.get(name);
        if (current != null && current.lease.isHealthy()) {
            return Optional.empty(); // held through this provider (maybe by this very thread): not reentrant
        }
        Optional<Lease> acquired;
        try {
            // Each lock() is one invocation (engine rule 17): its hold is never entered reentrantly — not by this
            // thread (a @GcsLocked method holding the name makes this "held"), not by another lock() — and
            // ShedLock may end it from another thread (the lockAtMostFor timer, a task finishing elsewhere).
            acquired = registry.tryAcquire(name, ttlFor(configuration), LockOwner.newInvocation("ShedLock lock " + name));
        } catch (GcsLockConfigurationException e) {
            throw new LockException("ShedLock lock name '" + name + "' is not a valid gcslock name: " + e.getMessage(), e);
        } catch (GcsLockException e) {
            throw new LockException(e.getMessage(), e);
        }
        if (acquired.isEmpty()) {
            return Optional.empty();
        }
        Lease lease = acquired.get();
        Hold hold = new Hold(name, lease, ttlFor(configuration));
        holds.put(name, hold);
        hold.expireAt(configuration.getLockAtMostUntil());
        log.debug("ShedLock lock '{}' acquired (lockAtMostFor {}, lockAtLeastFor {})", name,
                configuration.getLockAtMostFor(), configuration.getLockAtLeastFor());
        return Optional.of(new GcsSimpleLock(configuration, hold));
    }

    /** Stops the lockAtMostFor timer and releases every lock still held through this provider. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        timer.shutdownNow();
        List<Hold> left = new ArrayList<>(holds.values());
        holds.clear();
        for (Hold hold : left) {
            hold.lease.release();
        }
    }

    /** One acquisition through this provider, shared by the lock and the locks that extend it. */
    private final class Hold {
        final String name;
        final Lease lease;
        /** The TTL the lease has now (stored in its lock object). */
        volatile Duration ttl;
        /** The pending lockAtMostFor release; replaced by extend, cancelled by unlock. Guarded by this. */
        private ScheduledFuture<?> expiry;

        Hold(String name, Lease lease, Duration ttl) {
            this.name = name;
            this.lease = lease;
            this.ttl = ttl;
        }

        /** Releases the lock at {@code lockAtMostUntil} (ShedLock's clock), whatever its task is doing then. */
        synchronized void expireAt(Instant lockAtMostUntil) {
            long delay = Math.max(0, Duration.between(ClockProvider.now(), lockAtMostUntil).toNanos());
            try {
                expiry = timer.schedule(this::expire, delay, TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                lease.release(); // the provider was closed meanwhile: nothing would end this hold
                throw new IllegalStateException("this GcsLockProvider is closed", e);
            }
        }

        private void expire() {
            if (lease.isHealthy()) {
                log.info("ShedLock lock '{}' reached its lockAtMostFor and is released although its task may still "
                        + "be running; extend the lock or raise lockAtMostFor if the task needs longer", name);
            }
            lease.release();
            holds.remove(name, this);
        }

        /** Stops the lockAtMostFor release; false if it has already fired (the lock has expired). */
        synchronized boolean cancelExpiry() {
            return expiry != null && expiry.cancel(false);
        }
    }

    /** ShedLock's view of a hold: unlock once, or extend once into a new lock. */
    private final class GcsSimpleLock extends AbstractSimpleLock {
        private final Hold hold;

        GcsSimpleLock(LockConfiguration configuration, Hold hold) {
            super(configuration);
            this.hold = hold;
        }

        @Override
        protected void doUnlock() {
            hold.cancelExpiry();
            Lease lease = hold.lease;
            if (!lease.isHealthy()) {
                lease.lostReason().ifPresent(reason -> log.warn("ShedLock lock '{}' had been lost while its task ran ({}); "
                        + "another instance may have run the task at the same time", hold.name, reason));
                lease.release();
                holds.remove(hold.name, hold);
                return;
            }
            Duration atLeast = Duration.between(ClockProvider.now(), lockConfiguration.getLockAtLeastUntil());
            if (atLeast.isNegative() || atLeast.isZero()) {
                lease.release();
                holds.remove(hold.name, hold);
            } else {
                // Kept (and refreshed) until lockAtLeastUntil; the hold stays in `holds` meanwhile, so this
                // instance does not take the name again before then either.
                registry.releaseAfter(lease, atLeast);
            }
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
            // A lock whose lockAtMostFor has passed (or that was lost) cannot be extended: another
            // instance may already hold it. Cancelling the pending expiry decides the race with the timer.
            if (!hold.lease.isHealthy() || !hold.cancelExpiry()) {
                return Optional.empty();
            }
            Duration ttl = ttlFor(newConfiguration);
            if (!ttl.equals(hold.ttl)) {
                // A crashed holder must still free the lock after the shorter of the new lockAtMostFor and the TTL.
                try {
                    registry.renew(hold.lease, ttl);
                    hold.ttl = ttl;
                } catch (LockLostException e) {
                    hold.lease.release();
                    return Optional.empty();
                } catch (GcsLockException e) {
                    // Not confirmed now; the lease keeps refreshing and writes the new TTL with its next refresh.
                    hold.ttl = ttl;
                    log.debug("ShedLock lock '{}': the TTL of the extension is not confirmed yet: {}", hold.name, e.getMessage());
                }
            }
            hold.expireAt(newConfiguration.getLockAtMostUntil());
            log.debug("ShedLock lock '{}' extended (lockAtMostFor {}, lockAtLeastFor {})", hold.name,
                    newConfiguration.getLockAtMostFor(), newConfiguration.getLockAtLeastFor());
            return Optional.of(new GcsSimpleLock(newConfiguration, hold));
        }

        @Override
        public String toString() {
            return "GcsSimpleLock[" + hold.name + ", " + lockConfiguration + "]";
        }
    }
}
