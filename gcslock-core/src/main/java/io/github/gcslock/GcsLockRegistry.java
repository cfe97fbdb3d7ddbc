package io.github.gcslock;

import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import io.github.gcslock.LocalHolds.LocalSlot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
    private final String bucket;
    private final String prefix;
    private final Duration ttl;
    private final WaitPacing pacing;
    private final LongSupplier nanoTime;
    private final ProcessIdentity me;
    /** Every listener, told safely; on the right thread (rule 20). */
    private final Listeners listeners;
    /** Per name: the local permit, its owner thread and hold count (rules 13, 17); the leases held. */
    private final LocalHolds holds = new LocalHolds();
    /** Clocks, timing of an acquisition and the store that fits it (rule 15). */
    private final EngineContext context;
    /** Hands out the leases attempts create, and takes them back on close (rule 14). */
    private final LeaseIssuer issuer;
    private final AcquireAttempt attempts;
    private final LeaseKeeper keeper;
    /** Lock objects read for people (inspect, list), and the {@link LockInfo} of an object the protocol read. */
    private final LockInspector inspector;
    /** Gives back holds and ends leases (rule 12: guarded delete). */
    private final LeaseRelease release;
    /** Holds taken through {@link #obtain} views: every view of one name is one lock. */
    private final GcsDistributedLock.Holds lockViewHolds = new GcsDistributedLock.Holds();
    /** Counted down by close(): wakes every thread sleeping in acquire's wait loop at once. */
    private final CountDownLatch closing = new CountDownLatch(1);

    private GcsLockRegistry(RegistryDraft b, LockSettings settings, LockStore store) {
        this.store = store;
        this.bucket = settings.bucket();
        this.prefix = settings.prefix();
        this.ttl = settings.ttl();
        this.pacing = new WaitPacing(settings.backoff(), settings.writeRateWindow());
        this.nanoTime = b.nanoTime;
        this.me = ProcessIdentity.create(b.identity, b.applicationName);
        this.listeners = new Listeners(b.listeners, nanoTime);
        this.context = new EngineContext(settings, store, b.clock, nanoTime, me, listeners);
        FencingRecord fencing = new FencingRecord();
        this.keeper = new LeaseKeeper(context, settings.refreshInterval(), settings.maxRefreshFailures(), settings.refresherThreads());
        this.inspector = new LockInspector(store, prefix, ttl, me, nanoTime, holds, fencing);
        // Rule 16: a clean release is remembered by the attempts, which are built last (their leases need release).
        this.release = new LeaseRelease(store, keeper, holds, listeners, me, settings.writeRateWindow(), ttl,
                nanoTime, this::releasedCleanly);
        // A release makes at most three bounded calls and one write-window wait: close() waits that long for one.
        Duration releaseBound = settings.operationTimeout().multipliedBy(3).plus(settings.writeRateWindow());
        this.issuer = new LeaseIssuer(context, holds, keeper, release, inspector, fencing, releaseBound);
        this.attempts = new AcquireAttempt(bucket, me, b.clock, nanoTime, pacing, issuer);
    }

    private void releasedCleanly(String name, long sentNanos) {
        attempts.releasedCleanly(name, sentNanos);
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
            lease = tryAcquireOnce(name, context.timingFor(name, ttl));
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
            lease = acquireWaiting(name, maxWait, context.timingFor(name, ttl));
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
            // Rule 16: this process released the name cleanly under a write window ago (the releasing thread
            // coming back, or the next of its threads): a create now would only meet 429; wait the window out.
            long ownWindow = budget > 0 ? attempts.nanosUntilOwnWriteWindowEnds(name) : 0;
            if (ownWindow > 0 && closing.await(Math.min(ownWindow, Math.max(0, budget - (nanoTime.getAsLong() - start))),
                    TimeUnit.NANOSECONDS)) {
                checkOpen(name); // close() woke us
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

    // Called from the acquire paths: the store for a lease's timing (rule 15), and the hand-out of a lease.
    private LockStore storeFor(LeaseTiming timing) {
        return context.storeFor(timing);
    }

    private Lease own(LocalSlot slot, GcsLease lease) {
        return issuer.own(slot, lease);
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
        LeaseTiming next = ttl == null ? target.target() : context.timingFor(target.name(), ttl);
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
        issuer.close(closing::countDown); // wakes every waiter; each fails with "closed"
    }

    // ------------------------------------------------------------------ engine internals

    /** How many names have local state now (for tests: idle names must not accumulate). */
    int localStateSize() {
        return holds.size();
    }

    long nanoTime() {
        return nanoTime.getAsLong();
    }

    private void checkOpen() {
        if (issuer.isClosed()) {
            throw new IllegalStateException("this GcsLockRegistry is closed");
        }
    }

    private void checkOpen(String name) {
        if (issuer.isClosed()) {
            throw LeaseIssuer.closedException(name);
        }
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
        private final RegistryDraft draft;

        private Builder(Storage storage, String bucket) {
            this.storage = Objects.requireNonNull(storage, "storage");
            this.draft = new RegistryDraft(bucket);
        }

        /** Object name prefix of lock objects (default {@code gcslock/}). May be empty. */
        public Builder prefix(String prefix) {
            draft.prefix = prefix;
            return this;
        }

        /** How long a lock survives its holder's silence (default 5 minutes). Stored in each lock object. */
        public Builder ttl(Duration ttl) {
            draft.ttl = ttl;
            return this;
        }

        /**
         * Time between refreshes of a held lock. Default: TTL/8 floored to whole seconds (37 s for the
         * 5-minute default TTL, 7 s for a 1-minute TTL), or TTL/8 itself when that is under a second, so
         * that setting only the TTL always gives a valid combination.
         */
        public Builder refreshInterval(Duration refreshInterval) {
            draft.refreshInterval = refreshInterval;
            return this;
        }

        /** Consecutive failed refreshes after which a lease is declared lost (default 3). */
        public Builder maxRefreshFailures(int maxRefreshFailures) {
            draft.maxRefreshFailures = maxRefreshFailures;
            return this;
        }

        /**
         * A lease whose last confirmed refresh is older than {@code ttl - safetyMargin} is declared lost
         * (default: the smaller of TTL/5 and half of TTL minus the refresh interval).
         */
        public Builder safetyMargin(Duration safetyMargin) {
            draft.safetyMargin = safetyMargin;
            return this;
        }

        /** Upper bound of one lock operation including the client's own retries (default: the smaller of 10 s and TTL/3). */
        public Builder operationTimeout(Duration operationTimeout) {
            draft.operationTimeout = operationTimeout;
            return this;
        }

        /** Backoff between attempts while waiting: initial delay, cap and multiplier (default 1 s, 30 s, 2). */
        public Builder backoff(Duration initial, Duration max, double multiplier) {
            draft.backoffInitial = initial;
            draft.backoffMax = max;
            draft.backoffMultiplier = multiplier;
            return this;
        }

        /** Wall clock for the informational timestamps written into lock objects; never used to judge staleness. */
        public Builder clock(Clock clock) {
            draft.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Monotonic nanosecond source (default {@link System#nanoTime()}); for tests. */
        public Builder ticker(LongSupplier nanoTime) {
            draft.nanoTime = Objects.requireNonNull(nanoTime, "ticker");
            return this;
        }

        /** A label for people reading lock objects (default application@host:pid); a random part is always added. */
        public Builder identity(String identity) {
            draft.identity = identity;
            return this;
        }

        /** The application name written into lock objects. */
        public Builder applicationName(String applicationName) {
            draft.applicationName = applicationName;
            return this;
        }

        /** Whether {@link #build()} reads the bucket to check it exists and suits locks (default true). */
        public Builder verifyBucket(boolean verifyBucket) {
            draft.verifyBucket = verifyBucket;
            return this;
        }

        /**
         * How long GCS's per-object write limit lasts (about one write per second, so default 1 s): after a
         * 429 on a create or a release's delete, the engine waits this long once instead of retrying at
         * once. Shorter only for emulators that scale the limit down.
         */
        public Builder writeRateWindow(Duration writeRateWindow) {
            draft.writeRateWindow = Objects.requireNonNull(writeRateWindow, "writeRateWindow");
            return this;
        }

        /** Threads of the shared refresh scheduler (default 2). */
        public Builder refresherThreads(int threads) {
            draft.refresherThreads = threads;
            return this;
        }

        /** Adds a listener. */
        public Builder listener(LockEventListener listener) {
            draft.listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /** The refresh interval as {@link #build()} would derive it (for tests of the default). */
        Duration effectiveRefreshInterval() {
            return draft.settings().effectiveRefreshInterval();
        }

        /**
         * Validates the settings, checks the bucket (unless disabled) and returns the registry.
         *
         * @throws GcsLockConfigurationException naming the setting at fault
         * @throws GcsLockException if the bucket does not exist or cannot hold locks
         */
        public GcsLockRegistry build() {
            LockSettings settings = draft.settings().validated();
            // Anchors older than two TTLs are dropped: the monotonic clock drifts too, and a kept anchor's
            // error grows with its age (a contender with a fast clock would deem a live lock stale; rule 6).
            LockStore store = LockStore.open(storage, settings.operationTimeout(), settings.bucket(), settings.prefix(),
                    new GcsTimeEstimator(draft.nanoTime, settings.ttl().multipliedBy(2)), draft.nanoTime);
            if (draft.verifyBucket) {
                BucketCheck.check(store);
            }
            Duration refreshInterval = settings.refreshInterval();
            if (refreshInterval.compareTo(Duration.ofSeconds(1)) < 0) {
                log.warn("gcslock refresh interval {} is below 1 s: GCS allows about one write per second to one "
                        + "object, so refreshes may be rejected with 429 (fine against the emulator)", refreshInterval);
            }
            return new GcsLockRegistry(draft, settings, store);
        }
    }
}
