package io.github.gcslock;

import com.google.cloud.storage.Storage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import java.util.function.LongSupplier;

/**
 * The lock engine: distributed locks held as objects in one GCS bucket, following Hongli Lai's
 * robust Cloud Storage lock with the improvements numbered as rules in {@code docs/DESIGN.md}.
 *
 * <p>This class is the facade: the public API, {@link #close()} and the {@link Builder}. Acquire calls (local
 * queueing, the wait loop and its pace) are the {@link Acquirer}'s; one attempt (create, or read and adopt /
 * retake / take over) is an {@link AcquireAttempt}, and the {@link LeaseIssuer} hands out what it created.
 * Local holds and reentrancy (per {@link LockOwner}: a thread, or an invocation) are {@link LocalHolds}; held leases are kept (refreshed, their deadlines enforced)
 * by the {@link LeaseKeeper} and ended by {@link LeaseRelease} (a delete with the same preconditions);
 * {@link LockInspector} reads lock objects for people; {@link Listeners} tells the listeners. Every GCS request
 * goes through the {@link LockStore}. None of these parts refers to this class (see the code map in
 * {@code docs/DESIGN.md}).
 *
 * <p>Uncontended acquire + release costs exactly two GCS requests; a refresh costs one.
 *
 * <p>Create one with {@link #builder(Storage, String)}; {@link #close()} releases every held lease.
 */
public final class GcsLockRegistry implements LockRegistry, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GcsLockRegistry.class);

    private final String bucket;
    private final String prefix;
    private final Duration ttl;
    private final ProcessIdentity me;
    /** Every listener, told safely; on the right thread (rule 20). */
    private final Listeners listeners;
    /** Per name: the local permit, its owner (thread or invocation) and hold count (rules 13, 17); the leases held. */
    private final LocalHolds holds = new LocalHolds();
    /** Clocks, timing of an acquisition and the store that fits it (rule 15). */
    private final EngineContext context;
    /** Hands out the leases attempts create, and takes them back on close (rule 14). */
    private final LeaseIssuer issuer;
    private final AcquireAttempt attempts;
    /** Acquire calls: one-shot and waiting, local queueing, the wait loop (rules 16, 17). */
    private final Acquirer acquirer;
    private final LeaseKeeper keeper;
    /** Lock objects read for people (inspect, list), and the {@link LockInfo} of an object the protocol read. */
    private final LockInspector inspector;
    /** Gives back holds and ends leases (rule 12: guarded delete). */
    private final LeaseRelease release;
    /** Holds taken through {@link #obtain} views: every view of one name is one lock. */
    private final GcsDistributedLock.Holds lockViewHolds = new GcsDistributedLock.Holds();

    private GcsLockRegistry(RegistryDraft b, LockSettings settings, LockStore store) {
        this.bucket = settings.bucket();
        this.prefix = settings.prefix();
        this.ttl = settings.ttl();
        WaitPacing pacing = new WaitPacing(settings.backoff(), settings.writeRateWindow(), b.runtime);
        LongSupplier nanoTime = b.nanoTime;
        this.me = ProcessIdentity.create(b.identity, b.applicationName, b.runtime);
        this.listeners = new Listeners(b.listeners, nanoTime, b.runtime);
        store.reportOutcomesTo(listeners); // every request's outcome, from every path (requestAnswered/requestFailed)
        this.context = new EngineContext(settings, store, b.clock, nanoTime, me, listeners);
        FencingRecord fencing = new FencingRecord();
        this.keeper = new LeaseKeeper(context, settings.refreshInterval(), settings.maxRefreshFailures(), settings.writeRateWindow(),
                settings.refresherThreads(), new RefreshRateWarning(settings.refreshRateWarningShare(), bucket), b.runtime);
        this.inspector = new LockInspector(store, prefix, ttl, me, nanoTime, holds, fencing);
        // How long close(), and a release() racing close()'s release of its lease, wait for a release another thread runs
        // (rule 14): that release's worst case when every call is answered within the operation timeout (rule 15).
        // 1. It waits for the lease's I/O lock, which a renewal in flight may hold for two refreshes (the second after
        //    adopting an earlier refresh of ours, rule 8), each a write window (rule 21), a PATCH and, after a 412, a
        //    GET: 4 calls, 2 windows. (A scheduled refresh is half that; a later one sees the release begun and sends
        //    nothing.)
        // 2. Then its own sequence (rule 12): a write window, the single-try DELETE; after a 429 a window and the
        //    retrying DELETE; after a 412 a GET and the guarded re-delete: 4 calls, 2 windows.
        // So 8 calls and 4 windows. (Review 5's R5-6: the bound of 4 calls and 2 windows ran out before a release that
        // waited for a renewal and then met 429 and 412, every call answered, so release() returned with the object
        // still there.) Not covered: interrupts of the releasing thread, each of which may have a broken call sent
        // again (up to CallsThroughInterrupts.RESENDS_AFTER_INTERRUPTS more calls); a wait that runs out gives up with a WARN.
        Duration releaseBound = settings.operationTimeout().multipliedBy(8).plus(settings.writeRateWindow().multipliedBy(4));
        // Rule 16: a clean release is remembered by the attempts, which are built last (their leases need release).
        this.release = new LeaseRelease(store, keeper, holds, listeners, me, settings.writeRateWindow(), ttl,
                nanoTime, this::releasedCleanly, b.runtime, releaseBound);
        this.issuer = new LeaseIssuer(context, holds, keeper, release, inspector, fencing, releaseBound);
        this.attempts = new AcquireAttempt(bucket, me, b.clock, nanoTime, pacing, issuer, b.runtime);
        this.acquirer = new Acquirer(prefix, store, context, holds, attempts, issuer, pacing, b.runtime);
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
        return acquirer.tryAcquire(name, ttl, LockOwner.currentThread());
    }

    /**
     * Like {@link #tryAcquire(String, Duration)}, for {@code owner}: reentrant only if {@code owner} holds the
     * name already; any other owner here (a thread or another invocation) finds it held. See {@link LockOwner}.
     *
     * @param ttl the lease's TTL; null for the registry's
     */
    @Override
    public Optional<Lease> tryAcquire(String name, Duration ttl, LockOwner owner) {
        return acquirer.tryAcquire(name, ttl, Objects.requireNonNull(owner, "owner"));
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
        return acquirer.acquire(name, maxWait, ttl, LockOwner.currentThread());
    }

    /**
     * Like {@link #acquire(String, Duration, Duration)}, for {@code owner}: reentrant only if {@code owner} holds
     * the name already; while any other owner here holds it, this waits as for another process. See {@link LockOwner}.
     *
     * @param ttl the lease's TTL; null for the registry's
     */
    @Override
    public Lease acquire(String name, Duration maxWait, Duration ttl, LockOwner owner) throws InterruptedException {
        return acquirer.acquire(name, maxWait, ttl, Objects.requireNonNull(owner, "owner"));
    }

    // ------------------------------------------------------------------ release

    /**
     * Gives back the outermost hold of {@code lease} after {@code delay}, on the refresh scheduler;
     * the lease keeps being refreshed until then. A nested (reentrant) hold is given back at once.
     * For "hold at least" semantics (ShedLock's lockAtLeastFor): until the delay ends no thread of this
     * process gets the name — the calling one included, so the next run of a job on a single-thread
     * scheduler does not re-enter it — and other processes see it held. A delay too long for the scheduler's
     * nanoseconds ({@code ChronoUnit.FOREVER}) holds until {@link #close()}.
     *
     * @throws IllegalArgumentException if {@code lease} is not one of this registry's, or {@code delay} is negative
     */
    @Override
    public void releaseAfter(Lease lease, Duration delay) {
        ownLease(lease);
        release.releaseAfter(lease, delay);
    }

    /**
     * The lease behind {@code lease} if this registry handed it out. A lease of another registry (another process's
     * identity, refresher and holds) is refused before anything is done: renewed here it would be refreshed under
     * this registry's identity and lost as "the object now belongs to" someone else, and a delayed release here
     * would free another registry's hold.
     *
     * @throws IllegalArgumentException if {@code lease} is not one of this registry's
     */
    private GcsLease ownLease(Lease lease) {
        GcsLease target = lease instanceof ReentrantHold hold ? hold.lease() : lease instanceof GcsLease g ? g : null;
        if (target == null || !target.issuedBy(issuer)) {
            throw new IllegalArgumentException("not a lease of this registry: " + lease);
        }
        return target;
    }

    /**
     * Refreshes {@code lease} now (one GCS request) and, if {@code ttl} is given, makes it the lease's TTL
     * from then on: written into the lock object by this refresh (other processes judge staleness by it),
     * with the refresh interval and deadline derived from it as for {@link #tryAcquire(String, Duration)}.
     * A shorter TTL caps the lease's deadline as soon as the refresh is sent (the object may carry it
     * before we hear back); a longer one counts once the refresh is confirmed. Returns only when this
     * refresh, with its TTL, is in the lock object; when it throws, the renewal changed nothing: the lease
     * goes on with the TTL and refresh interval it had.
     *
     * @param ttl the new TTL, or null to keep the current one
     * @throws LockLostException             if the lease is lost or released
     * @throws GcsLockException              if GCS did not confirm the refresh now (the lease stays held and
     *                                       keeps refreshing on its schedule, with its former TTL)
     * @throws GcsLockConfigurationException if {@code ttl} cannot be refreshed safely
     * @throws IllegalArgumentException      if {@code lease} is not one of this registry's
     */
    @Override
    public void renew(Lease lease, Duration ttl) {
        GcsLease target = ownLease(lease);
        lease.checkHealthy();
        issuer.checkOpen(target.name());
        LeaseTiming next = ttl == null ? target.target() : context.timingFor(target.name(), ttl);
        if (!keeper.refreshNow(target, next)) {
            target.checkHealthy();
            throw new GcsLockException(target.name(), "lock '" + target.name() + "' could not be renewed now: GCS did "
                    + "not confirm the refresh; the lease is still held and keeps refreshing with its former TTL");
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
        return holds.heldNotReleasing();
    }

    /**
     * Deletes the lock object of {@code name} whoever holds it, if it is still the generation and
     * metageneration given (as read by {@link #inspect}): an administrator's tool. The holder finds
     * out at its next refresh. Returns whether this call deleted it.
     */
    @Override
    public boolean forceRelease(String name, long fencingToken, long metageneration) {
        // Rule 21: forcing out a lease of this very process a moment after its create or refresh would meet GCS's
        // write limit (429, retried by the client): wait out that write window first. The inspector validates the
        // name; an invalid one matches no lease here, so it is refused without a wait.
        release.awaitWriteWindowBeforeForcedDelete(name, fencingToken);
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

    /**
     * Threads that send refreshes now. The pool grows while every thread is busy with a request, up to
     * {@link Builder#refresherThreads(int)}, and a thread idle for a minute ends.
     */
    public int refresherThreads() {
        return keeper.threadCount();
    }

    /**
     * GCS object writes per second that the leases this registry holds need to stay alive: one PATCH per
     * lease per refresh interval (e.g. 10,000 leases at the default 37 s interval: 270/s). GCS starts a
     * bucket at about 1,000 writes per second across all its users (README "Scale"); above
     * {@link Builder#refreshRateWarningShare(double)} of that, this registry logs one WARN.
     */
    public double refreshRate() {
        return keeper.refreshRate();
    }

    /**
     * Releases every held lease (deleting their lock objects) and stops refreshing; wakes every waiting acquire (it
     * fails), also one queued behind another call of the same name. Returns when every release in flight has ended —
     * also the ones running on application threads, hold-at-least releases, and the delete of a lease whose create
     * raced this close() — and every create in flight on another thread has ended (its lease handed out and released,
     * or its object deleted again); no create is sent once it has begun. It waits for them (for a listener only where
     * one runs on an acquiring thread between its create and the hand-out) at most eight operation timeouts and four write
     * windows in all: one release's worst case (a renewal in flight, then a DELETE meeting 429 and 412). The releases of
     * the leases held when it began run on the calling thread first, one after another, each bounded likewise.
     * Idempotent: a second call returns when the first has, and then (bounded likewise) when every create and release
     * the first left running on its own thread has ended. A second call made on a thread whose own create or release is
     * in flight, or inside a renewal or refresh of a lease (code of the application's GCS transport), returns without
     * waiting: the first one may be waiting for that very work.
     */
    @Override
    public void close() {
        issuer.close(acquirer::wakeWaiters); // wakes every waiter; each fails with "closed"
    }

    // ------------------------------------------------------------------ engine internals

    /** How many names have local state now (for tests: idle names must not accumulate). */
    int localStateSize() {
        return holds.size();
    }

    long nanoTime() {
        return context.nanoTime();
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

        /**
         * The most threads that send refreshes (and run hold-at-least releases) at once (default 256). The pool
         * starts a thread whenever a refresh is due and every thread is busy with a request, so a lease's
         * refresh never waits behind another lease's slow request below this bound; threads idle for a minute
         * end. Capacity is about {@code threads / reply time} refreshes per second (256 at 100 ms: 2,560/s,
         * more than a bucket's ~1,000 writes/s); beyond the bound, due refreshes queue. (Earlier snapshots used
         * this as a fixed pool size, default 2: a value set for that is now the bound, so that many requests in
         * flight is still the most there will be.)
         */
        public Builder refresherThreads(int threads) {
            draft.refresherThreads = threads;
            return this;
        }

        /**
         * The share of a bucket's initial write budget (about 1,000 object writes per second) at which this
         * registry's own refresh writes make it log one WARN (default 0.5: 500 writes/s, e.g. 18,500 leases at
         * the default 37 s interval). See {@link GcsLockRegistry#refreshRate()}.
         */
        public Builder refreshRateWarningShare(double share) {
            draft.refreshRateWarningShare = share;
            return this;
        }

        /** Adds a listener. */
        public Builder listener(LockEventListener listener) {
            draft.listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Internal, for tests (not API): the engine's threads and timed waits come from {@code runtime} (a
         * deterministic explorer's virtual time) instead of real threads and real time.
         */
        Builder runtime(EngineRuntime runtime) {
            draft.runtime = Objects.requireNonNull(runtime, "runtime");
            return this;
        }

        /**
         * Internal, for tests (not API): the storage is used as given (an in-memory storage), not through a copy of
         * its client with retries bounded by the operation timeout; it must bound and fail its calls itself.
         */
        Builder storageAsGiven() {
            draft.storageAsGiven = true;
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
            GcsTimeEstimator gcsTime = new GcsTimeEstimator(draft.nanoTime, settings.ttl().multipliedBy(2));
            LockStore store = draft.storageAsGiven
                    ? LockStore.openAsGiven(storage, settings.bucket(), settings.prefix(), gcsTime, draft.nanoTime)
                    : LockStore.open(storage, settings.operationTimeout(), settings.bucket(), settings.prefix(), gcsTime, draft.nanoTime);
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
