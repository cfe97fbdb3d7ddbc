package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import io.github.gcslock.LocalHolds.LocalSlot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.LongSupplier;

/**
 * The lock engine: distributed locks held as objects in one GCS bucket, following Hongli Lai's
 * robust Cloud Storage lock with the improvements numbered as rules in {@code docs/DESIGN.md}.
 *
 * <p>This class is the facade: the public API, the wait loop, handing out a lease and {@link #close()}.
 * One attempt (create, or read and adopt / retake / take over) is an {@link AcquireAttempt}; a waiting
 * acquire repeats it, paced by {@link WaitPacing}. Local queueing and reentrancy are {@link LocalHolds};
 * held leases are kept (refreshed, their deadlines enforced) by the {@link LeaseKeeper} and ended by
 * {@link LeaseRelease} (a delete with the same preconditions); {@link LockInspector} reads lock objects for
 * people; {@link Listeners} tells the listeners. Every GCS request goes through the {@link LockStore}. None
 * of these parts refers to this class (see the code map in {@code docs/DESIGN.md}).
 *
 * <p>Uncontended acquire + release costs exactly two GCS requests; a refresh costs one.
 *
 * <p>Create one with {@link #builder(Storage, String)}; {@link #close()} releases every held lease.
 */
public final class GcsLockRegistry implements LockRegistry, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GcsLockRegistry.class);

    /** Every GCS request; its {@link LockStore#singleTry()} view serves the attempts of a waiting acquire. */
    private final LockStore store;
    /** The registry's bound on one GCS call (rule 15); a lease with a shorter TTL gets a tighter one ({@link #storeFor}). */
    private final Duration operationTimeout;
    private final String bucket;
    private final String prefix;
    private final Duration ttl;
    private final int maxRefreshFailures;
    /** The timing of acquisitions without a TTL of their own: the registry's settings. */
    private final LeaseTiming defaultTiming;
    private final WaitPacing pacing;
    private final Clock clock;
    private final LongSupplier nanoTime;
    private final ProcessIdentity me;
    /** How long close() waits for releases already running: a release makes at most three bounded calls and one write-window wait. */
    private final Duration releaseBound;
    /** Every listener, told safely; on the right thread (rule 20). */
    private final Listeners listeners;
    /** Per name: the local permit, its owner thread and hold count (rules 13, 17); the leases held. */
    private final LocalHolds holds = new LocalHolds();
    /** Per name, the highest generation seen: a fencing token that did not increase is reported (rule 18). */
    private final FencingRecord fencing = new FencingRecord();
    /** What the engine parts ask of the registry (they hold no reference to it). */
    private final EngineCallbacks callbacks = new EngineCallbacks();
    private final AcquireAttempt attempts;
    private final LeaseKeeper keeper;
    /** Lock objects read for people (inspect, list), and the {@link LockInfo} of an object the protocol read. */
    private final LockInspector inspector;
    /** Gives back holds and ends leases (rule 12: guarded delete). */
    private final LeaseRelease release;
    /** Acquisition TTLs already warned about as refreshing faster than GCS's write limit (one line each). */
    private final Set<Duration> shortTtlsWarned = ConcurrentHashMap.newKeySet();
    /** Holds taken through {@link #obtain} views: every view of one name is one lock. */
    private final GcsDistributedLock.Holds lockViewHolds = new GcsDistributedLock.Holds();
    private volatile boolean closed;
    /**
     * Serialises handing out a lease with {@link #close()}: a create that finishes while close() runs
     * either registers its lease before close() takes its snapshot (and close() releases it) or sees
     * the registry closed (and deletes its object). Without it the lease escapes unrefreshed.
     */
    private final Object lifecycle = new Object();
    /** Counted down by close(): wakes every thread sleeping in acquire's wait loop at once. */
    private final CountDownLatch closing = new CountDownLatch(1);

    private GcsLockRegistry(Builder b, LockSettings settings, LockStore store) {
        this.store = store;
        this.operationTimeout = settings.operationTimeout();
        this.bucket = settings.bucket();
        this.prefix = settings.prefix();
        this.ttl = settings.ttl();
        this.maxRefreshFailures = settings.maxRefreshFailures();
        this.defaultTiming = new LeaseTiming(ttl, settings.refreshInterval(), settings.safetyMargin());
        this.pacing = new WaitPacing(settings.backoff(), settings.writeRateWindow());
        this.clock = b.clock;
        this.nanoTime = b.nanoTime;
        this.me = ProcessIdentity.create(b.identity, b.applicationName);
        this.releaseBound = settings.operationTimeout().multipliedBy(3).plus(settings.writeRateWindow());
        this.listeners = new Listeners(b.listeners, nanoTime);
        this.attempts = new AcquireAttempt(bucket, me, clock, nanoTime, pacing, callbacks);
        this.keeper = new LeaseKeeper(callbacks, settings.refreshInterval(), maxRefreshFailures, settings.refresherThreads());
        this.inspector = new LockInspector(store, prefix, ttl, me, nanoTime, holds, fencing);
        this.release = new LeaseRelease(store, keeper, holds, listeners, me, settings.writeRateWindow(), ttl,
                nanoTime, attempts::releasedCleanly);
    }

    /** Starts a builder for locks in {@code bucket}, using (a bounded-retry copy of) {@code storage}. */
    public static Builder builder(Storage storage, String bucket) {
        return new Builder(storage, bucket);
    }

    // ------------------------------------------------------------------ acquire

    @Override
    public Optional<Lease> tryAcquire(String name) {
        return tryAcquire(name, null);
    }

    /**
     * Like {@link #tryAcquire(String)}, but the lease gets its own TTL: stored in the lock object (other
     * processes judge its staleness by it), with its refresh interval and safety margin derived from it by
     * the rules of the registry's defaults (TTL/8 in whole seconds, or TTL/8 under a second; the smaller of
     * TTL/5 and half of TTL minus the interval). A reentrant hold keeps the TTL of the outer one.
     *
     * @param ttl the lease's TTL; null for the registry's
     * @throws GcsLockConfigurationException (setting {@code ttl}) if that TTL cannot be refreshed safely
     */
    @Override
    public Optional<Lease> tryAcquire(String name, Duration ttl) {
        long start = nanoTime.getAsLong();
        AcquireOutcome outcome = AcquireOutcome.ERROR;
        Optional<Lease> lease = Optional.empty();
        try {
            lease = tryAcquireOnce(name, timingFor(name, ttl));
            outcome = lease.isPresent() ? AcquireOutcome.ACQUIRED : AcquireOutcome.BUSY;
            return lease;
        } finally {
            if (!(lease.orElse(null) instanceof ReentrantHold)) { // a reentrant hold is not an acquisition
                listeners.acquireFinished(name, outcome, start);
            }
        }
    }

    @Override
    public Lease acquire(String name, Duration maxWait) throws InterruptedException {
        return acquire(name, maxWait, null);
    }

    /**
     * Like {@link #acquire(String, Duration)}, but the lease gets its own TTL, as with
     * {@link #tryAcquire(String, Duration)}.
     *
     * @param ttl the lease's TTL; null for the registry's
     */
    @Override
    public Lease acquire(String name, Duration maxWait, Duration ttl) throws InterruptedException {
        long start = nanoTime.getAsLong();
        AcquireOutcome outcome = AcquireOutcome.ERROR;
        Lease lease = null;
        try {
            lease = acquireWaiting(name, maxWait, timingFor(name, ttl));
            outcome = AcquireOutcome.ACQUIRED;
            return lease;
        } catch (LockNotAcquiredException e) {
            outcome = AcquireOutcome.TIMEOUT;
            throw e;
        } finally {
            if (!(lease instanceof ReentrantHold)) { // a reentrant hold is not an acquisition
                listeners.acquireFinished(name, outcome, start);
            }
        }
    }

    /** The registry's timing, or one derived from an acquisition's own TTL (validated). */
    private LeaseTiming timingFor(String name, Duration ttl) {
        if (ttl == null || ttl.equals(this.ttl)) {
            return defaultTiming;
        }
        LeaseTiming timing = LeaseTiming.derive(name, ttl, maxRefreshFailures);
        if (timing.refreshInterval().compareTo(Duration.ofSeconds(1)) < 0 && shortTtlsWarned.add(ttl)) {
            log.warn("lock '{}' acquired with TTL {}: it is refreshed every {}, faster than GCS's one write per second "
                    + "to one object, so refreshes may be rejected with 429 (fine against the emulator)", name, ttl,
                    timing.refreshInterval());
        }
        return timing;
    }

    private Optional<Lease> tryAcquireOnce(String name, LeaseTiming timing) {
        checkOpen();
        LockObject.validateName(prefix, name);
        LocalSlot slot = holds.pin(name);
        try {
            return tryAcquireOnce(name, slot, timing);
        } finally {
            holds.unpin(name, slot);
        }
    }

    private Optional<Lease> tryAcquireOnce(String name, LocalSlot slot, LeaseTiming timing) {
        Lease reentrant = holds.reenter(slot, name);
        if (reentrant != null) {
            return Optional.of(reentrant);
        }
        listeners.acquireStarted(name, AcquireMode.TRY);
        if (!slot.permit.tryAcquire()) {
            return Optional.empty(); // another thread of this process holds it or is asking GCS right now
        }
        boolean acquired = false;
        try {
            checkOpen(name);
            // Rule 16: always at least one request (a cron tick must not end with nobody running); a name last
            // seen held by another process costs 1 (a create refused unread while that is fresh, else a read).
            AcquireAttempt.Result result = attempts.attempt(name, ProcessIdentity.randomHex(8), storeFor(timing), new AcquireAttempt.UnknownCreates(), timing, true, false);
            if (result.lease() != null) {
                acquired = true;
                return Optional.of(own(slot, result.lease()));
            }
            listeners.notAcquired(name, result.holder());
            return Optional.empty();
        } catch (StorageException e) {
            throw store.unavailable(name, e);
        } finally {
            if (!acquired) {
                slot.permit.release();
            }
        }
    }

    private Lease acquireWaiting(String name, Duration maxWait, LeaseTiming timing) throws InterruptedException {
        checkOpen();
        LockObject.validateName(prefix, name);
        requireNonNegative("maxWait", maxWait);
        LocalSlot slot = holds.pin(name);
        try {
            return acquireWaiting(name, maxWait, slot, timing);
        } finally {
            holds.unpin(name, slot);
        }
    }

    private Lease acquireWaiting(String name, Duration maxWait, LocalSlot slot, LeaseTiming timing) throws InterruptedException {
        long start = nanoTime.getAsLong();
        long budget = saturatedNanos(maxWait);
        Lease reentrant = holds.reenter(slot, name);
        if (reentrant != null) {
            return reentrant;
        }
        listeners.acquireStarted(name, AcquireMode.WAIT);
        if (!slot.permit.tryAcquire(budget, TimeUnit.NANOSECONDS)) {
            throw new LockNotAcquiredException(name, maxWait, null, null);
        }
        boolean acquired = false;
        try {
            // close() while this thread queued on the local permit: the thread that had it was woken by
            // close() and gave it up; so do we, rather than start asking GCS for a closed registry.
            checkOpen(name);
            // One lease id for the whole wait: if a create's reply is lost and the client gives up, our
            // next attempt finds the object with this id and adopts it instead of waiting out the TTL.
            String leaseId = ProcessIdentity.randomHex(8);
            // Creates of this wait whose outcome is unknown (lost reply, timeout): any of them may have
            // written the object we later adopt, so the adopted object is dated from the earliest.
            AcquireAttempt.UnknownCreates unknownCreates = new AcquireAttempt.UnknownCreates();
            LockInfo holder = attempts.lastSeenHolder(name);
            StorageException lastError = null;
            // Rule 16: a process that has been seeing the name held (over earlier calls too: a follower calling
            // tryLock(500 ms) back to back) keeps its pace: a look that is not due yet is waited for, not sent.
            // A wait of zero is one-shot and always asks.
            long left = budget - (nanoTime.getAsLong() - start);
            long untilDue = budget > 0 && left > 0 ? attempts.nanosUntilNextLook(name) : 0;
            if (untilDue > 0) {
                if (closing.await(Math.min(untilDue, left), TimeUnit.NANOSECONDS)) {
                    checkOpen(name); // close() woke us
                }
                if (untilDue > left) {
                    throw new LockNotAcquiredException(name, maxWait, holder, null, true);
                }
            }
            boolean held = true;
            for (int n = 0; ; n++) {
                checkOpen(name);
                try {
                    held = false;
                    // Read first once the lock was seen held (1 request a look, not a create + read); create
                    // when it is gone, take over when stale (rules 2-5, 16). A wait of zero is one-shot.
                    AcquireAttempt.Result result = attempts.attempt(name, leaseId, storeFor(timing).singleTry(), unknownCreates, timing, budget == 0,
                            lastError != null && lastError.getCode() == 429);
                    if (result.lease() != null) {
                        acquired = true;
                        return own(slot, result.lease());
                    }
                    holder = result.holder();
                    held = result.held();
                    lastError = null;
                    listeners.notAcquired(name, result.holder());
                } catch (StorageException e) {
                    if (!LockStore.isTransient(e)) {
                        throw store.unavailable(name, e);
                    }
                    lastError = e;
                    log.debug("lock '{}': transient GCS error while acquiring, will retry: {}", name, e.getMessage());
                }
                long remaining = budget - (nanoTime.getAsLong() - start);
                if (remaining <= 0) {
                    throw new LockNotAcquiredException(name, maxWait, holder, lastError, held);
                }
                // Rule 16: after a 429 the write window, after other errors the backoff, after seeing a holder
                // the next look the attempt scheduled (its interval grows with the time waited).
                long delay = lastError != null ? pacing.afterError(lastError, n).toNanos()
                        : held && attempts.nanosUntilNextLook(name) > 0 ? attempts.nanosUntilNextLook(name)
                        : pacing.backoff().delay(n).toNanos();
                long sleep = Math.min(remaining, delay);
                if (closing.await(sleep, TimeUnit.NANOSECONDS)) {
                    checkOpen(name); // close() woke us: fail now, not after the backoff
                }
                if (held && delay > remaining) {
                    // The next look is not due within this call: no look at the deadline (it keeps its pace,
                    // rule 16); the wait ends having seen the lock held.
                    throw new LockNotAcquiredException(name, maxWait, holder, null, true);
                }
            }
        } finally {
            if (!acquired) {
                slot.permit.release();
            }
        }
    }

    /**
     * The store for calls made for a lease of {@code timing} (rule 15): each call must fail well before the
     * lease's deadline so that the next refresh can still run, so a lease whose TTL is shorter than the
     * registry's gets calls bounded by TTL/3 (the registry's own default rule) instead of the registry's
     * operation timeout — a 10 s timeout would outlast a 2 s lease's whole deadline.
     */
    private LockStore storeFor(LeaseTiming timing) {
        Duration third = Duration.ofMillis(Math.max(1, timing.ttl().toMillis() / 3));
        return third.compareTo(operationTimeout) < 0 ? store.boundedTo(third) : store;
    }

    private GcsLease newLease(String name, Blob object, String leaseId, Instant acquiredAt, long sentNanos, LeaseTiming timing) {
        return new GcsLease(callbacks, name, object.getBlobId(), object.getGeneration(),
                object.getMetageneration(), leaseId, acquiredAt, LockObject.updated(object), sentNanos, timing);
    }

    /**
     * Hands out a lease the caller's attempt created: registers it (refreshed, released by close()) and
     * tells the listeners. The caller holds the slot's permit; if this throws, the permit is given back
     * here and the lock object deleted, so a lease that is not handed out never stays behind.
     */
    private Lease own(LocalSlot slot, GcsLease lease) {
        boolean registered = false;
        synchronized (lifecycle) {
            if (!closed) {
                holds.own(slot, lease);
                keeper.start(lease);
                registered = true;
            }
        }
        if (!registered) {
            // The create raced close(): close() has already released its snapshot of the held leases and
            // stopped the refresher, so nobody would refresh or release this one. Delete it now.
            log.info("lock '{}': the registry was closed while the lock was being acquired; deleting it again", lease.name());
            release.deleteUnhandedOut(lease);
            slot.permit.release();
            throw closedException(lease.name());
        }
        log.debug("lock '{}' acquired, fencing token {}", lease.name(), lease.fencingToken());
        Long before = fencing.regressedFrom(lease);
        try {
            if (before != null) {
                log.warn("lock '{}': acquired with fencing token {}, not greater than {} seen earlier for this name; GCS "
                        + "documents generations as unique, not as increasing: a resource that refuses tokens below the "
                        + "last it accepted will refuse this holder's writes", lease.name(), lease.fencingToken(), before);
                listeners.fencingTokenRegression(lease, before);
            }
            listeners.acquired(lease); // first among the lease's events (rule 20)
        } catch (Error e) {
            // Listeners swallows a listener's RuntimeException; an Error (an assertion, a linkage error, an
            // out-of-memory) reaches the caller, whose call fails: it will never release this lease, so
            // release it here instead of leaving it held and refreshed for the life of the process.
            log.warn("lock '{}': a listener failed while the lock was handed out ({}); releasing it", lease.name(), e.toString());
            release.releaseNow(lease);
            throw e;
        }
        return lease;
    }

    // ------------------------------------------------------------------ release

    /**
     * Gives back the outermost hold of {@code lease} after {@code delay}, on the refresh scheduler;
     * the lease keeps being refreshed until then. A nested (reentrant) hold is given back at once.
     * For "hold at least" semantics (ShedLock's lockAtLeastFor): until the delay ends no thread of this
     * process gets the name — the calling one included, so the next run of a job on a single-thread
     * scheduler does not re-enter it — and other processes see it held.
     */
    @Override
    public void releaseAfter(Lease lease, Duration delay) {
        requireNonNegative("delay", delay);
        if (lease instanceof ReentrantHold) {
            lease.release(); // a nested hold: the outermost hold decides when the lock goes
            return;
        }
        if (!(lease instanceof GcsLease target)) {
            throw new IllegalArgumentException("not a lease of this registry: " + lease);
        }
        if (delay.isZero()) {
            target.release();
            return;
        }
        release.releaseAfter(target, delay);
    }

    /**
     * Refreshes {@code lease} now (one GCS request) and, if {@code ttl} is given, makes it the lease's TTL
     * from then on: written into the lock object by this refresh (other processes judge staleness by it),
     * with the refresh interval and deadline derived from it as for {@link #tryAcquire(String, Duration)}.
     * A shorter TTL caps the lease's deadline as soon as the refresh is sent (the object may carry it
     * before we hear back); a longer one counts once the refresh is confirmed.
     *
     * @param ttl the new TTL, or null to keep the current one
     * @throws LockLostException             if the lease is lost or released
     * @throws GcsLockException              if GCS did not confirm the refresh now (the lease stays held and
     *                                       keeps refreshing on its schedule)
     * @throws GcsLockConfigurationException if {@code ttl} cannot be refreshed safely
     * @throws IllegalArgumentException      if {@code lease} is not one of this registry's
     */
    @Override
    public void renew(Lease lease, Duration ttl) {
        GcsLease target = lease instanceof ReentrantHold hold ? hold.lease() : lease instanceof GcsLease g ? g : null;
        if (target == null) {
            throw new IllegalArgumentException("not a lease of this registry: " + lease);
        }
        lease.checkHealthy();
        checkOpen(target.name());
        LeaseTiming next = ttl == null ? target.target() : timingFor(target.name(), ttl);
        if (!keeper.refreshNow(target, next)) {
            target.checkHealthy();
            throw new GcsLockException(target.name(), "lock '" + target.name() + "' could not be renewed now: GCS did "
                    + "not confirm the refresh; the lease is still held and keeps refreshing");
        }
    }

    // ------------------------------------------------------------------ other API

    @Override
    public <T, E extends Exception> T withLock(String name, Duration maxWait, LockedCallable<T, E> action)
            throws E, InterruptedException {
        Objects.requireNonNull(action, "action");
        try (Lease lease = acquire(name, maxWait)) {
            return action.call(lease);
        }
    }

    @Override
    public Lock obtain(String name) {
        LockObject.validateName(prefix, name);
        return new GcsDistributedLock(this, name, lockViewHolds);
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        return inspector.inspect(name);
    }

    @Override
    public List<LockInfo> list() {
        return inspector.list();
    }

    @Override
    public Collection<Lease> heldLeases() {
        // A lease leaves as soon as its release begins: it is no longer healthy then, and health checks
        // must not count a normal release (whose DELETE may take a second after a 429) as a lost lock.
        List<Lease> held = new ArrayList<>();
        for (GcsLease lease : holds.live()) {
            if (!lease.isReleasing()) {
                held.add(lease);
            }
        }
        return List.copyOf(held);
    }

    /**
     * Deletes the lock object of {@code name} whoever holds it, if it is still the generation and
     * metageneration given (as read by {@link #inspect}): an administrator's tool. The holder finds
     * out at its next refresh. Returns whether this call deleted it.
     */
    @Override
    public boolean forceRelease(String name, long fencingToken, long metageneration) {
        return inspector.forceRelease(name, fencingToken, metageneration);
    }

    /** Adds a listener for acquisitions, releases, losses, refreshes and takeovers. */
    public void addListener(LockEventListener listener) {
        listeners.add(listener);
    }

    /** The owner id written into lock objects by this registry. */
    public String owner() {
        return me.owner();
    }

    public String bucket() {
        return bucket;
    }

    public String prefix() {
        return prefix;
    }

    public Duration ttl() {
        return ttl;
    }

    /** Time between refreshes of a held lock (as set, or derived from the TTL: TTL/8 in whole seconds). */
    public Duration refreshInterval() {
        return keeper.interval();
    }

    /** Threads the refresh scheduler uses now. */
    public int refresherThreads() {
        return keeper.threadCount();
    }

    /** Releases every held lease (deleting their lock objects) and stops refreshing. Idempotent. */
    @Override
    public void close() {
        List<GcsLease> held;
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            held = holds.live();
        }
        closing.countDown(); // wakes every waiter; each fails with "closed"

        if (!held.isEmpty()) {
            log.info("releasing {} held lock(s) on shutdown", held.size());
        }
        for (GcsLease lease : held) {
            release.releaseNow(lease);
        }
        // A release already running on the refresher (a hold-at-least release that came due) is not in
        // this loop's hands: let it finish, bounded, so that close() never leaves an object of ours behind.
        keeper.close(releaseBound);
    }

    // ------------------------------------------------------------------ engine internals

    /** How many names have local state now (for tests: idle names must not accumulate). */
    int localStateSize() {
        return holds.size();
    }

    long nanoTime() {
        return nanoTime.getAsLong();
    }

    /** GCS time as well as we can tell: the proven lower bound once we have seen a reply, else our clock. */
    private Instant estimatedGcsNow() {
        Instant bound = store.gcsTime().lowerBoundNow();
        return bound != null ? bound : clock.instant();
    }

    /** The registry as its engine parts see it: {@link AcquireAttempt}, {@link GcsLease}, {@link LeaseKeeper}. */
    private final class EngineCallbacks implements AcquireAttempt.Engine, GcsLease.Engine, LeaseKeeper.Engine {
        @Override
        public boolean isLive(String leaseId) {
            return holds.isLive(leaseId);
        }

        @Override
        public LockInfo info(String name, Blob object) {
            return inspector.info(name, object);
        }

        @Override
        public void tookOver(String name, LockInfo stale) {
            listeners.tookOver(name, stale);
        }

        @Override
        public GcsLease newLease(String name, Blob object, String leaseId, Instant acquiredAt, long sentNanos,
                LeaseTiming timing) {
            return GcsLockRegistry.this.newLease(name, object, leaseId, acquiredAt, sentNanos, timing);
        }

        @Override
        public Instant estimatedGcsNow() {
            return GcsLockRegistry.this.estimatedGcsNow();
        }

        @Override
        public Instant estimatedGcsNowOrNull() {
            return store.gcsTime().lowerBoundNow();
        }

        @Override
        public long nanoTime() {
            return nanoTime.getAsLong();
        }

        @Override
        public Listeners listeners() {
            return listeners;
        }

        @Override
        public void releaseHold(GcsLease lease) {
            release.releaseHold(lease);
        }

        @Override
        public boolean isOurs(Blob object, String leaseId) {
            return me.isOurs(object, leaseId);
        }

        @Override
        public LockStore storeFor(LeaseTiming timing) {
            return GcsLockRegistry.this.storeFor(timing);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this GcsLockRegistry is closed");
        }
    }

    private void checkOpen(String name) {
        if (closed) {
            throw closedException(name);
        }
    }

    private static IllegalStateException closedException(String name) {
        return new IllegalStateException("lock '" + name + "' was not acquired: this GcsLockRegistry was closed");
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 2;
        }
    }

    private static void requireNonNegative(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative()) {
            throw new GcsLockConfigurationException(what, what + " must not be negative, got " + d);
        }
    }

    // ------------------------------------------------------------------ builder

    /** Settings of a {@link GcsLockRegistry}; {@link #build()} validates them and checks the bucket. */
    public static final class Builder {
        private final Storage storage;
        private final String bucket;
        private String prefix = "gcslock/";
        private Duration ttl = Duration.ofMinutes(5);
        private Duration refreshInterval;
        private int maxRefreshFailures = 3;
        private Duration safetyMargin;
        private Duration operationTimeout;
        private Duration backoffInitial = Duration.ofSeconds(1);
        private Duration backoffMax = Duration.ofSeconds(30);
        private double backoffMultiplier = 2.0;
        private Clock clock = Clock.systemUTC();
        private LongSupplier nanoTime = System::nanoTime;
        private String identity;
        private String applicationName;
        private boolean verifyBucket = true;
        private int refresherThreads = 2;
        private Duration writeRateWindow = Duration.ofSeconds(1);
        private final List<LockEventListener> listeners = new ArrayList<>();

        private Builder(Storage storage, String bucket) {
            this.storage = Objects.requireNonNull(storage, "storage");
            this.bucket = bucket;
        }

        /** Object name prefix of lock objects (default {@code gcslock/}). May be empty. */
        public Builder prefix(String prefix) {
            this.prefix = prefix;
            return this;
        }

        /** How long a lock survives its holder's silence (default 5 minutes). Stored in each lock object. */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /**
         * Time between refreshes of a held lock. Default: TTL/8 floored to whole seconds (37 s for the
         * 5-minute default TTL, 7 s for a 1-minute TTL), or TTL/8 itself when that is under a second, so
         * that setting only the TTL always gives a valid combination.
         */
        public Builder refreshInterval(Duration refreshInterval) {
            this.refreshInterval = refreshInterval;
            return this;
        }

        /** Consecutive failed refreshes after which a lease is declared lost (default 3). */
        public Builder maxRefreshFailures(int maxRefreshFailures) {
            this.maxRefreshFailures = maxRefreshFailures;
            return this;
        }

        /**
         * A lease whose last confirmed refresh is older than {@code ttl - safetyMargin} is declared lost
         * (default: the smaller of TTL/5 and half of TTL minus the refresh interval).
         */
        public Builder safetyMargin(Duration safetyMargin) {
            this.safetyMargin = safetyMargin;
            return this;
        }

        /** Upper bound of one lock operation including the client's own retries (default: the smaller of 10 s and TTL/3). */
        public Builder operationTimeout(Duration operationTimeout) {
            this.operationTimeout = operationTimeout;
            return this;
        }

        /** Backoff between attempts while waiting: initial delay, cap and multiplier (default 1 s, 30 s, 2). */
        public Builder backoff(Duration initial, Duration max, double multiplier) {
            this.backoffInitial = initial;
            this.backoffMax = max;
            this.backoffMultiplier = multiplier;
            return this;
        }

        /** Wall clock for the informational timestamps written into lock objects; never used to judge staleness. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Monotonic nanosecond source (default {@link System#nanoTime()}); for tests. */
        public Builder ticker(LongSupplier nanoTime) {
            this.nanoTime = Objects.requireNonNull(nanoTime, "ticker");
            return this;
        }

        /** A label for people reading lock objects (default application@host:pid); a random part is always added. */
        public Builder identity(String identity) {
            this.identity = identity;
            return this;
        }

        /** The application name written into lock objects. */
        public Builder applicationName(String applicationName) {
            this.applicationName = applicationName;
            return this;
        }

        /** Whether {@link #build()} reads the bucket to check it exists and suits locks (default true). */
        public Builder verifyBucket(boolean verifyBucket) {
            this.verifyBucket = verifyBucket;
            return this;
        }

        /**
         * How long GCS's per-object write limit lasts (about one write per second, so default 1 s): after a
         * 429 on a create or a release's delete, the engine waits this long once instead of retrying at
         * once. Shorter only for emulators that scale the limit down.
         */
        public Builder writeRateWindow(Duration writeRateWindow) {
            this.writeRateWindow = Objects.requireNonNull(writeRateWindow, "writeRateWindow");
            return this;
        }

        /** Threads of the shared refresh scheduler (default 2). */
        public Builder refresherThreads(int threads) {
            this.refresherThreads = threads;
            return this;
        }

        /** Adds a listener. */
        public Builder listener(LockEventListener listener) {
            this.listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /** The refresh interval as {@link #build()} would derive it (for tests of the default). */
        Duration effectiveRefreshInterval() {
            return settings().effectiveRefreshInterval();
        }

        private LockSettings settings() {
            return new LockSettings(bucket, prefix, ttl, refreshInterval, maxRefreshFailures, safetyMargin,
                    operationTimeout, backoffInitial, backoffMax, backoffMultiplier, writeRateWindow, refresherThreads);
        }

        /**
         * Validates the settings, checks the bucket (unless disabled) and returns the registry.
         *
         * @throws GcsLockConfigurationException naming the setting at fault
         * @throws GcsLockException if the bucket does not exist or cannot hold locks
         */
        public GcsLockRegistry build() {
            LockSettings settings = settings().validated();
            // Anchors older than two TTLs are dropped: the monotonic clock drifts too, and a kept anchor's
            // error grows with its age (a contender with a fast clock would deem a live lock stale; rule 6).
            LockStore store = LockStore.open(storage, settings.operationTimeout(), bucket, prefix,
                    new GcsTimeEstimator(nanoTime, settings.ttl().multipliedBy(2)), nanoTime);
            if (verifyBucket) {
                BucketCheck.check(store);
            }
            Duration refreshInterval = settings.refreshInterval();
            if (refreshInterval.compareTo(Duration.ofSeconds(1)) < 0) {
                log.warn("gcslock refresh interval {} is below 1 s: GCS allows about one write per second to one "
                        + "object, so refreshes may be rejected with 429 (fine against the emulator)", refreshInterval);
            }
            return new GcsLockRegistry(this, settings, store);
        }
    }
}
