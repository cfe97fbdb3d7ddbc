package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.StorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * One attempt to acquire a lock (DESIGN.md rules 2–5):
 * <ol>
 * <li>Create the lock object with {@code ifGenerationMatch=0}: success means we hold it.</li>
 * <li>On 412 (it exists) read it once and decide: gone meanwhile → create again at once; ours from
 * this very acquire → adopt it (the client retried our create after a lost reply); ours but from a
 * lease this process no longer has → leaked, delete and retake at once; provably stale → delete
 * with generation + metageneration preconditions and retake at once; otherwise someone holds it.</li>
 * </ol>
 * Every request goes through the {@link LockStore} it is given (bounded, or single-try for a waiter).
 */
final class AcquireAttempt {

    private static final Logger log = LoggerFactory.getLogger(AcquireAttempt.class);

    /** How many times one attempt may "retry at once" (object vanished, leaked or stale deleted) before giving up. */
    private static final int MAX_IMMEDIATE_RETRIES = 4;

    /** What an attempt needs from the rest of the engine. */
    interface Engine {
        /** Whether this process holds a live lease with {@code leaseId} (rule 4: otherwise ours is leaked). */
        boolean isLive(String leaseId);

        /** What {@code object} says about lock {@code name}, staleness included (rule 6). */
        LockInfo info(String name, Blob object);

        /** A stale holder's object was deleted by this attempt (rule 5). */
        void tookOver(String name, LockInfo stale);

        /** The lease of an object this attempt created or adopted, healthy from {@code sentNanos}. */
        GcsLease newLease(String name, Blob object, String leaseId, Instant acquiredAt, long sentNanos, LeaseTiming timing);

        /** GCS time as well as we can tell (for the expiry written into the object). */
        Instant estimatedGcsNow();

        /** The proven lower bound of GCS time, or null before any reply (for the waiting pace). */
        Instant estimatedGcsNowOrNull();

        /**
         * A create of {@code name} is about to be sent on this thread (rule 14): throws "closed" if the registry is
         * closed, else counts the create in flight until {@link #endCreate} — close() waits for it, so that no
         * object of ours lands after close() returned. In one step with close()'s own: either close() finds it, or
         * it finds the registry closed and nothing is sent.
         */
        CreateInFlight beginCreate(String name);

        /** Ends {@code create} (its outcome is known, and its lease handed out or its object deleted again). Idempotent. */
        void endCreate(CreateInFlight create);
    }

    /** A create counted in flight ({@link Engine#beginCreate}): close() waits until it has ended (rule 14). */
    static final class CreateInFlight {
        final Thread thread = Thread.currentThread();
        final java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
    }

    private final String bucket;
    private final ProcessIdentity me;
    private final Clock clock;
    private final LongSupplier nanoTime;
    private final Engine engine;
    private final WaitPacing pacing;
    /** The write-window sleep (real time, unless a test's runtime substitutes virtual time). */
    private final EngineRuntime runtime;
    private final ContentionHistory history = new ContentionHistory();

    AcquireAttempt(String bucket, ProcessIdentity me, Clock clock, LongSupplier nanoTime, WaitPacing pacing, Engine engine) {
        this(bucket, me, clock, nanoTime, pacing, engine, EngineRuntime.REAL);
    }

    AcquireAttempt(String bucket, ProcessIdentity me, Clock clock, LongSupplier nanoTime, WaitPacing pacing, Engine engine,
                   EngineRuntime runtime) {
        this.runtime = runtime;
        this.pacing = pacing;
        this.bucket = bucket;
        this.me = me;
        this.clock = clock;
        this.nanoTime = nanoTime;
        this.engine = engine;
    }

    /**
     * The outcome of one attempt.
     *
     * @param lease   the lease acquired, or null
     * @param holder  the holder seen, or null (acquired; or refused without a read, see {@link #refusedUnread})
     * @param held    another process holds it (seen, or known from a refused create)
     * @param sawFree the attempt saw the name free at some point (no object, or it deleted a stale one)
     */
    record Result(GcsLease lease, LockInfo holder, boolean held, boolean sawFree, CreateInFlight create) {
        Result(GcsLease lease, LockInfo holder, boolean held, boolean sawFree) {
            this(lease, holder, held, sawFree, null);
        }

        /** The lease of the create {@code create}, still in flight until the lease is handed out (rule 14). */
        static Result created(GcsLease lease, boolean sawFree, CreateInFlight create) {
            return new Result(lease, null, false, sawFree, create);
        }

        static Result heldBy(LockInfo holder, boolean sawFree) {
            return new Result(null, holder, true, sawFree);
        }

        /** A create was refused while its object was known young; not read (rule 16). */
        static Result refusedUnread(boolean sawFree) {
            return new Result(null, null, true, sawFree);
        }
    }

    /**
     * The send time of the earliest create (of one acquire call, all with one lease id) whose outcome is
     * unknown: it may have committed, and the object it wrote is as old as that send, not as old as the
     * create that later finds it.
     */
    static final class UnknownCreates {
        private boolean any;
        private long earliestSentNanos;
        /** A create of an earlier call (another lease id) may still commit (ContentionHistory). */
        private boolean earlierCall;
        /**
         * The flight of this call's first create whose outcome is unknown (rule 14): kept open until the call has
         * adopted that object (handed out), deleted it, or ended, so that close() waits for the call meanwhile.
         */
        private CreateInFlight kept;

        /** Keeps {@code flight} open for the call (the first one kept; one is enough for close()), or ends it. */
        void keep(CreateInFlight flight, java.util.function.Consumer<CreateInFlight> end) {
            if (kept == null) {
                kept = flight;
            } else if (kept != flight) {
                end.accept(flight);
            }
        }

        /** The flight kept open, handed to whoever ends it now (the hand-out of an adopted object); null if none. */
        CreateInFlight takeKept() {
            CreateInFlight flight = kept;
            kept = null;
            return flight;
        }

        /** Ends the flight kept open, if any: the call has deleted the object or ended. */
        void endKept(java.util.function.Consumer<CreateInFlight> end) {
            CreateInFlight flight = takeKept();
            if (flight != null) {
                end.accept(flight);
            }
        }

        void earlierCallMayCommit() {
            earlierCall = true;
        }

        /**
         * Whether a 412 may come from an object of ours that we have not seen: a create of this acquisition, or
         * of an earlier call of this process, whose outcome is unknown (rule 16: then the object is read).
         */
        boolean mayHaveCommittedUnseen() {
            return any || earlierCall;
        }

        /** Whether a create of this acquisition (its lease id) may have committed unseen. */
        boolean ofThisCall() {
            return any;
        }

        void record(long sentNanos) {
            if (!any || sentNanos - earliestSentNanos < 0) {
                any = true;
                earliestSentNanos = sentNanos;
            }
        }

        /** When an object of ours found by a create sent at {@code sentNanos} may have been written, at the earliest. */
        long writtenNoEarlierThan(long sentNanos) {
            return any && earliestSentNanos - sentNanos < 0 ? earliestSentNanos : sentNanos;
        }
    }

    /** How an attempt starts (rule 16). */
    enum Start {
        /** Create; on 412 read the object (nothing known of the name, or this process held it last). */
        CREATE,
        /**
         * Create; on 412 refuse without reading — this process knew, less than a quarter of a TTL ago, that any
         * object of the name was young (a live holder read, or the name seen free) — unless a create of ours may
         * have committed unseen.
         */
        CREATE_REFUSING_UNREAD,
        /** Read first: the name was last seen held by another process. */
        READ
    }

    /**
     * One attempt as rule 16 paces it, remembering what it saw ({@link ContentionHistory}). A name this process
     * never looked at or held last: create, and read on 412. A name last seen held by another process: a
     * one-shot attempt ({@code oneShot}: tryAcquire, a wait of zero) creates and refuses a 412 unread while
     * this process's knowledge of it is fresh, else reads first; a waiter's look always reads first (polls
     * are reads, never writes) — except right after our create met 429 ({@code afterThrottledCreate}). Throws
     * StorageException on errors.
     */
    Result attempt(String name, String leaseId, LockStore store, UnknownCreates unknownCreates, LeaseTiming timing,
            boolean oneShot, boolean afterThrottledCreate) {
        long look = nanoTime.getAsLong();
        if (history.mayHaveUnseenCreate(name, look, timing.ttl().toNanos())) {
            unknownCreates.earlierCallMayCommit();
        }
        ContentionHistory.Sighting before = history.sighting(name);
        // This process released it last, cleanly (its object deleted): objects of the name are young from then.
        ContentionHistory.CleanRelease clean = before == null ? history.cleanRelease(name) : null;
        Long cleanRelease = clean == null ? null : clean.sentNanos();
        long fresh = freshFor(before, timing);
        // Right after our create met 429 (the holder's delete was under a write window ago), the name was free
        // a moment ago: create at once, a read would only say so again.
        Start start = afterThrottledCreate ? Start.CREATE
                : before == null
                ? oneShot && cleanRelease != null && look - cleanRelease < fresh ? Start.CREATE_REFUSING_UNREAD : Start.CREATE
                : oneShot && before.knownYoungAt(look) ? Start.CREATE_REFUSING_UNREAD
                : Start.READ;
        Result result = run(name, leaseId, store, unknownCreates, timing, start);
        if (result.lease() != null || (result.sawFree() && !result.held())) {
            history.sawFreeOrAcquired(name);
        }
        // Seen free but lost the race: this process is still waiting for the name, so its wait goes on (the
        // poll interval keeps growing, rather than every release sending the waiters that saw it back to quick polls).
        if (result.held()) {
            // A holder read (live, or it would have been taken over) or the name seen free: this process knows
            // any object of the name is young from here on, for a while. A create refused unread teaches nothing new.
            // Without new knowledge the old stays (and ages), so a one-shot caller reads again in time.
            // A live holder read: a quarter TTL (reads at that cadence keep the GCS-time bound tight, at no extra
            // cost: a refused create is one request too), but never past the moment its object could be stale.
            // The quarter is of the TTL of the holder just read (rule 16: "the holder's TTL as last read"), not of
            // the sighting before nor of this acquisition.
            long youngUntil = result.holder() != null
                    ? Math.min(look + quarterOf(result.holder(), fresh), couldFirstBeStaleNanos(result.holder(), look))
                    : result.sawFree() ? look + fresh
                    : before != null ? before.youngUntilNanos()
                    : cleanRelease != null ? cleanRelease + fresh : look;
            ContentionHistory.Sighting s = history.sawHeld(name, result.holder(), look, youngUntil);
            Duration pause = pacing.pollDelay(s.holder(), engine.estimatedGcsNowOrNull(), s.waitedNanos(look));
            history.nextLookAt(name, nanoTime.getAsLong() + pause.toNanos(), !oneShot);
        }
        return result;
    }

    /**
     * When the live holder's object just read ({@code holder}, looked at from {@code lookNanos}) could first be
     * stale, on the monotonic clock: its {@code updated} + its TTL, reached by the GCS-time lower bound (rule 6)
     * — never later than one TTL after this look (the observed-time rule). Until then that object cannot be
     * stale, so a one-shot attempt may refuse a 412 unread; its first attempt after reads, so a dead holder is
     * taken over (rule 5) at the first tick after the bound proves it stale, not up to a quarter TTL later.
     */
    private long couldFirstBeStaleNanos(LockInfo holder, long lookNanos) {
        long ttl = holder.ttl() != null ? holder.ttl().toNanos() : 0;
        Instant gcsNow = engine.estimatedGcsNowOrNull();
        long now = nanoTime.getAsLong();
        if (gcsNow == null || holder.updated() == null) {
            return lookNanos + ttl;
        }
        // + 1 ms: the bound counts whole milliseconds, and stale means strictly past updated + ttl.
        long untilStale = Duration.between(gcsNow, holder.updated()).toNanos() + ttl + 1_000_000L;
        return now + Math.max(0, Math.min(untilStale, ttl));
    }

    /**
     * For how long after this process saw a name free (or released it cleanly) a one-shot attempt may refuse a
     * 412 unread: a quarter of the TTL (the last holder read's, else this acquisition's; after a read of a live
     * holder, that holder's: {@link #quarterOf}); the object made after
     * that is of unknown TTL. A dead holder's object is read at least that often by a process that keeps
     * asking, so it is proved stale (rule 6) and taken over (rule 5).
     */
    private static long freshFor(ContentionHistory.Sighting s, LeaseTiming timing) {
        Duration ttl = s != null && s.holder() != null && s.holder().ttl() != null ? s.holder().ttl() : timing.ttl();
        return ttl.toNanos() / WaitPacing.LOOKS_PER_TTL;
    }

    /** A quarter of the TTL of {@code holder}, a holder just read (rule 16); {@code otherwise} if it names none. */
    private static long quarterOf(LockInfo holder, long otherwise) {
        return holder.ttl() != null ? holder.ttl().toNanos() / WaitPacing.LOOKS_PER_TTL : otherwise;
    }

    /**
     * How long until the next look at {@code name} is due (rule 16: a process whose waiting calls have been
     * seeing it held keeps their pace across calls); 0 if it is due, if the name was not last seen held, or if
     * the last look was a one-shot's (it paced no wait).
     */
    long nanosUntilNextLook(String name) {
        ContentionHistory.Sighting s = history.sighting(name);
        return s == null || !s.paced() ? 0 : Math.max(0, s.nextLookNanos() - nanoTime.getAsLong());
    }

    /** This process released {@code name} and its DELETE, sent at {@code sentNanos}, deleted the object (rule 16). */
    void releasedCleanly(String name, long sentNanos) {
        history.releasedCleanly(name, sentNanos);
    }

    /** The holder this process last saw of {@code name}, or null. */
    LockInfo lastSeenHolder(String name) {
        ContentionHistory.Sighting s = history.sighting(name);
        return s == null ? null : s.holder();
    }

    /**
     * One attempt of the acquire algorithm (DESIGN.md rules 2–5), including the "retry at once" cases, started
     * as {@code start} says (rule 16). Throws StorageException on errors.
     */
    Result run(String name, String leaseId, LockStore store, UnknownCreates unknownCreates, LeaseTiming timing,
            Start start) {
        boolean readFirst = start == Start.READ;
        Duration ttl = timing.ttl();
        BlobId id = store.id(name);
        LockInfo seen = null;
        // This attempt has seen the name free (a read found no object, or our guarded delete removed it): an
        // object that a later create of ours meets was made after that, so it is younger than this call.
        boolean sawFree = false;
        // ... or this process knew the name's objects young recently enough (Start.CREATE_REFUSING_UNREAD).
        boolean knownYoung = start == Start.CREATE_REFUSING_UNREAD;
        // A single-try create failed transiently: create again through the caller's store, which retries by itself.
        boolean throughRetryingClient = false;
        // When the last create of this attempt returned: an object of ours it finds may have been written until then.
        long lastCreateEnded = nanoTime.getAsLong();
        // When this attempt's own DELETE (a stale takeover, a leaked retake) returned: its create waits a write
        // window after it (rule 21), or GCS answers 429 and the client retries it several times.
        Long ownDeleteEnded = null;
        // Rule 16: our DELETE of an object we read (a stale takeover, a leaked retake) was refused, so the object
        // changed since that read: most likely held again (refreshed, or taken by another contender). Read it next, as
        // a look at a name seen held, instead of a create that would be refused and need the read anyway.
        boolean readNext = false;
        for (int i = 0; i <= MAX_IMMEDIATE_RETRIES; i++) {
            long sent = nanoTime.getAsLong();
            Instant now = clock.instant();
            Blob current = null;
            if ((i == 0 && readFirst) || readNext) {
                // Rule 16, read first: the name was last seen held by another process, so it most likely still
                // is; one read tells (a create would be refused and need a read anyway).
                readNext = false;
                current = store.read(id);
                sawFree = current == null;
            }
            if (current == null) {
                sent = nanoTime.getAsLong();
                now = clock.instant();
                // After seeing the name free, create through the client that does not retry by itself, so that
                // a 412 cannot come from an unseen try of our own (see the refusal below).
                LockStore creator = !throughRetryingClient && (sawFree || knownYoung) && !unknownCreates.mayHaveCommittedUnseen()
                        ? store.singleTry() : store;
                boolean singleTry = creator.singleTry() == creator;
                if (ownDeleteEnded != null) {
                    awaitWriteWindow(ownDeleteEnded);
                    now = clock.instant();
                    sent = nanoTime.getAsLong();
                } else if (awaitWriteWindowAfterAnEarlierDelete(name, store, id)) {
                    now = clock.instant();
                    sent = nanoTime.getAsLong();
                }
                // Rule 14: counted in flight from here until its lease is handed out or its object deleted again, so
                // that close() waits for it; refused here once the registry is closed (an attempt that began before
                // close() and read meanwhile would otherwise create after close() returned, its object landing then).
                CreateInFlight flight = engine.beginCreate(name);
                boolean handedOn = false;
                try {
                    Blob created = creator.create(
                            LockObject.newLockObject(bucket, id.getName(), me, leaseId, ttl, now, engine.estimatedGcsNow().plus(ttl)));
                    GcsLease lease = engine.newLease(name, created, leaseId, now, sent, timing);
                    if (arrivedPastItsDeadline(lease, created, store)) {
                        unknownCreates.record(sent); // if its delete failed, the object is ours, written at `sent`
                        unknownCreates.keep(flight, engine::endCreate);
                        handedOn = true;
                        continue;
                    }
                    // This create won, so no earlier create of the call left an object (it would have been refused):
                    // nothing of theirs is left for close() to wait for.
                    unknownCreates.endKept(engine::endCreate);
                    handedOn = true;
                    return Result.created(lease, sawFree, flight);
                } catch (StorageException e) {
                    // A create whose outcome is unknown (a lost reply, a timeout; a 412 through the retrying client,
                    // which may be from its own retry) may have left an object of ours that this call must still adopt
                    // or delete: it stays in flight until then (rule 14). Any other answer leaves nothing to hand out.
                    boolean unknown = e.getCode() == 412 ? !singleTry
                            : e.getCode() != 404 && !(singleTry && e.getCode() == 429);
                    if (unknown) {
                        unknownCreates.keep(flight, engine::endCreate);
                        handedOn = true;
                    } else {
                        engine.endCreate(flight);
                    }
                    lastCreateEnded = nanoTime.getAsLong();
                    if (e.getCode() != 412) {
                        if (e.getCode() == 404) {
                            throw new GcsLockException(name, "bucket '" + bucket + "' does not exist (GCS answered 404 "
                                    + "to creating lock object '" + id.getName() + "')", e);
                        }
                        // A 429 to a single try: GCS refused it (its write limit), so it did not commit. Any other
                        // failure (through the retrying client, a 429 may follow an earlier try that did commit):
                        if (!(singleTry && e.getCode() == 429)) {
                            unknownCreates.record(sent); // a lost reply or a timeout: it may have committed
                            history.createOutcomeUnknown(name, sent); // ... even after this call has ended (slow request)
                        }
                        if (creator != store && LockStore.isTransient(e)) {
                            throughRetryingClient = true;
                            continue; // the caller's store retries by itself: create again through it (a 412 is then read)
                        }
                        throw e;
                    }
                    if (!singleTry) {
                        // The client may have retried this create after a lost reply: the 412 may be from our own try.
                        unknownCreates.record(sent);
                    } else if ((sawFree || knownYoung) && !unknownCreates.mayHaveCommittedUnseen()) {
                        // Rule 16: no (second) read. The object was created after this attempt saw the name free,
                        // so it is younger than this call and cannot be stale (or this process knew its objects
                        // young a moment ago); it is not ours (this create was one request, refused, and no
                        // create of ours is of unknown outcome). Refusing is always safe; reading is for liveness.
                        return Result.refusedUnread(sawFree);
                    }
                } finally {
                    if (!handedOn) {
                        engine.endCreate(flight); // after arrivedPastItsDeadline's delete, or whatever was thrown
                    }
                }
                // 412: the object exists. Read it once to learn whose it is and when it was last written.
                current = store.read(id);
                if (current == null) {
                    sawFree = true;
                    continue; // released between our create and our read: try again at once
                }
            }
            String owner = LockObject.owner(current);
            String currentLease = LockObject.leaseId(current);
            seen = engine.info(name, current);
            if (me.owner().equals(owner) && leaseId.equals(currentLease)) {
                // Our own create: the client retried it after a lost reply, and the retry hit the object
                // the first try had made. Adopt it — deleting our own fresh lock would be absurd. But it may
                // have been written by any earlier create of this acquire whose reply was lost, long ago (a
                // lost-reply outage longer than the TTL): date it from the earliest such create, never
                // from this one, or we would report healthy a lock others already see stale.
                long writtenFrom = unknownCreates.writtenNoEarlierThan(sent);
                if (nanoTime.getAsLong() - writtenFrom >= timing.refreshInterval().toNanos()) {
                    // Older than a refresh interval (the refresher assumes a new lease is fresher): confirm
                    // it with a PATCH guarded by the generation and metageneration we read. Another process
                    // that saw it stale deletes with the same guards, so exactly one of us wins.
                    Confirmed confirmed = confirmAdopted(current, store, ttl, lastCreateEnded);
                    if (confirmed == null) {
                        continue; // deleted or changed since our read: someone took it over; look again
                    }
                    GcsLease lease = engine.newLease(name, confirmed.blob(), leaseId, now, confirmed.sentNanos(), timing);
                    if (arrivedPastItsDeadline(lease, confirmed.blob(), store)) {
                        unknownCreates.record(writtenFrom);
                        continue;
                    }
                    log.debug("lock '{}': adopted our own create whose reply was lost, after confirming it", name);
                    return Result.created(lease, sawFree, unknownCreates.takeKept());
                }
                GcsLease lease = engine.newLease(name, current, leaseId, now, writtenFrom, timing);
                if (arrivedPastItsDeadline(lease, current, store)) {
                    unknownCreates.record(writtenFrom);
                    continue;
                }
                log.debug("lock '{}': adopted our own create whose reply was lost", name);
                return Result.created(lease, sawFree, unknownCreates.takeKept());
            }
            if (me.owner().equals(owner) && !engine.isLive(currentLease)) {
                // Ours from a lease this process no longer has (a release that failed, a crashed thread):
                // nobody else can be using it, so retake it at once instead of waiting for the TTL.
                log.info("lock '{}': removing a lock object this process leaked earlier (lease {})", name, currentLease);
                // Sent whatever the interrupt flag says, as a release is (rule 12): the call may end at that interrupt,
                // and the object, leaked once already, would then stay past close() (found by the review of the late
                // object's delete, issue 29: a failed release's object, retaken by an interrupted tryAcquire whose DELETE
                // met a 503).
                Blob leaked = current;
                CallsThroughInterrupts calls = new CallsThroughInterrupts();
                LockStore.GuardedDelete deleted;
                try {
                    deleted = calls.send(() -> store.deleteIfUnchangedOutcome(leaked));
                } finally {
                    calls.restoreFlag();
                }
                sawFree |= deleted != LockStore.GuardedDelete.CHANGED;
                if (deleted == LockStore.GuardedDelete.DELETED) {
                    ownDeleteEnded = nanoTime.getAsLong();
                }
                readNext = deleted == LockStore.GuardedDelete.CHANGED;
                continue;
            }
            if (seen.stale()) {
                // DESIGN.md rule 5: preconditions on generation and metageneration: if the holder refreshed,
                // or another contender took over between our GET and this DELETE, the delete fails.
                LockStore.GuardedDelete deleted = store.deleteIfUnchangedOutcome(current);
                if (deleted == LockStore.GuardedDelete.DELETED) {
                    ownDeleteEnded = nanoTime.getAsLong();
                    sawFree = true;
                    log.info("lock '{}': took over from {} which has not refreshed since {} (TTL {})", name, owner,
                            seen.updated(), seen.ttl());
                    engine.tookOver(name, seen);
                } else if (deleted == LockStore.GuardedDelete.GONE) {
                    sawFree = true; // released meanwhile: create next, as after a read that found it free
                } else {
                    readNext = true;
                }
                continue;
            }
            return Result.heldBy(seen, sawFree);
        }
        return new Result(null, seen, false, sawFree);
    }

    /**
     * Rules 3, 14: a call that ends without the lease (a wait ended by close(), an interrupt, its budget or GCS
     * unreachable; a one-shot that failed) after a create of {@code leaseId} whose outcome is unknown (its reply was
     * lost: it may have committed) reads the object and deletes it if that create wrote it — guarded by what it
     * read, so nobody else's object goes. Nothing else would: no lease of it exists, and other processes wait out its
     * TTL. A failure is logged; the object then stays for its TTL (or until this process next asks for the name and
     * retakes it, rule 4). A create still in flight that commits after the read is not seen (GCS has no cancel).
     */
    void deleteOwnUnknownCreate(String name, String leaseId, LockStore store) {
        // The caller's interrupt flag (a one-shot on an interrupted thread; the interrupt that ended the call) is
        // cleared for these two requests, so that they are sent, and given back afterwards; a call another interrupt
        // breaks is sent again, as a release's is (rule 12).
        CallsThroughInterrupts calls = new CallsThroughInterrupts();
        try {
            Blob current = calls.send(() -> store.read(store.id(name)));
            if (current != null && me.owner().equals(LockObject.owner(current)) && leaseId.equals(LockObject.leaseId(current))
                    && calls.send(() -> store.deleteIfUnchanged(current))) {
                log.debug("lock '{}': deleted the object of a create whose reply was lost, as the call ended without the lock", name);
            }
        } catch (RuntimeException e) {
            log.warn("lock '{}': could not check for a lock object of a create whose reply was lost as the call ended "
                    + "({}); if it committed, it stays until its TTL passes", name, e.getMessage());
        } finally {
            calls.restoreFlag();
        }
    }

    /**
     * DESIGN.md rule 11 at hand-out: whether {@code lease}'s deadline had already passed when the reply that
     * made it arrived (a create or confirm reply that was slow — within the operation timeout — or read by a
     * starved thread). Other processes may already judge the object stale and have taken it over, so such a
     * lease is never handed out, not even as an unhealthy one (a caller that does not check would run its
     * job beside the next holder). The object is deleted guarded by what we saw, so a takeover that already
     * happened is never undone; if that delete fails, the object is ours with no live lease, and the next
     * attempt retakes it (rule 4). The delete is sent whatever the interrupt flag says, and again after an interrupt
     * broke it, as a release's is (rule 12): the call may end here (an interrupt, its budget), and then nothing else
     * would delete the object before its TTL passes, not even close(), which knows only leases it handed out. (Found by
     * the interleaving explorer on the unmutated engine, issue 29: a create reply 2.3 s late, request listeners
     * blocking the acquiring thread past the deadline, an interrupt meanwhile; this delete was never sent, the call
     * ended by that interrupt, and every registry closed with the object in the bucket.)
     */
    private boolean arrivedPastItsDeadline(GcsLease lease, Blob object, LockStore store) {
        if (nanoTime.getAsLong() - lease.deadlineNanos() < 0) {
            return false;
        }
        log.info("lock '{}': the reply that acquired it came after its deadline ({} after the request was sent); "
                + "not handing it out, deleting it", lease.name(), lease.timing().ttl().minus(lease.timing().safetyMargin()));
        CallsThroughInterrupts calls = new CallsThroughInterrupts();
        try {
            calls.send(() -> store.deleteIfUnchanged(object));
        } catch (StorageException e) {
            log.debug("lock '{}': could not delete the late lock object; the next attempt retakes it", lease.name(), e);
        } finally {
            calls.restoreFlag();
        }
        return true;
    }

    private record Confirmed(Blob blob, long sentNanos) {
    }

    /**
     * Sleeps until one write window after {@code lastWriteEndedNanos} (a write of this attempt to the object, rule 21)
     * on the registry's clock, whatever interrupts come; the interrupt flag is given back.
     */
    private void awaitWriteWindow(long lastWriteEndedNanos) {
        long windowEnd = lastWriteEndedNanos + pacing.writeRateWindow().toNanos();
        if (runtime.sleepUntilIgnoringInterrupts(windowEnd, nanoTime)) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Rule 21 for a new acquisition's create: this process's last DELETE of the object (a release of ours a moment
     * ago, the DELETE that handed the name to a waiter of this process, a forced delete, an earlier attempt's
     * takeover) was a write to it, so the create waits out the window after that call's end; GCS would answer 429 and
     * the client retry it (4 requests for one reacquire right after a release). Whether it waited. A registry closed
     * meanwhile fails the attempt before it creates ({@link Engine#beginCreate}, rule 14).
     */
    private boolean awaitWriteWindowAfterAnEarlierDelete(String name, LockStore store, BlobId id) {
        Long ended = store.lastDeleteEnded(id);
        if (ended == null || nanoTime.getAsLong() - (ended + pacing.writeRateWindow().toNanos()) >= 0) {
            return false;
        }
        awaitWriteWindow(ended);
        return true;
    }

    /**
     * Refreshes an adopted object of ours with a PATCH guarded by the generation and metageneration we
     * read; the result is dated from the PATCH's send time. Null if the object changed or vanished since
     * our read (412/404): another process found it stale and took it over. Other errors are thrown
     * (the outcome is unknown; the next attempt reads the object again).
     */
    private Confirmed confirmAdopted(Blob current, LockStore store, Duration ttl, long lastCreateEnded) {
        // Rule 21: the object may have been written by our own create until that call returned (the client retried
        // it after a lost reply): the confirming PATCH waits out the write window after it, as a refresh would.
        awaitWriteWindow(lastCreateEnded);
        long sent = nanoTime.getAsLong();
        BlobInfo change = BlobInfo.newBuilder(current.getBlobId())
                .setMetadata(Map.of(LockObject.EXPIRES, engine.estimatedGcsNow().plus(ttl).toString(),
                        LockObject.REFRESH, runtime.randomId(6)))
                .build();
        try {
            Blob after = store.patch(change, current.getGeneration(), current.getMetageneration());
            return new Confirmed(after, sent);
        } catch (StorageException e) {
            if (e.getCode() == 412 || e.getCode() == 404) {
                return null;
            }
            throw e;
        }
    }
}
