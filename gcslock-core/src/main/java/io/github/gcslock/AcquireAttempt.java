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
    }

    private final String bucket;
    private final ProcessIdentity me;
    private final Clock clock;
    private final LongSupplier nanoTime;
    private final Engine engine;

    AcquireAttempt(String bucket, ProcessIdentity me, Clock clock, LongSupplier nanoTime, Engine engine) {
        this.bucket = bucket;
        this.me = me;
        this.clock = clock;
        this.nanoTime = nanoTime;
        this.engine = engine;
    }

    /** The outcome of one attempt: a lease, or the holder seen. */
    record Result(GcsLease lease, LockInfo holder) {
    }

    /**
     * The send time of the earliest create (of one acquire call, all with one lease id) whose outcome is
     * unknown: it may have committed, and the object it wrote is as old as that send, not as old as the
     * create that later finds it.
     */
    static final class UnknownCreates {
        private boolean any;
        private long earliestSentNanos;

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

    /** One attempt of the acquire algorithm (DESIGN.md rules 2–5), including the "retry at once" cases. Throws StorageException on errors. */
    Result run(String name, String leaseId, LockStore store, UnknownCreates unknownCreates, LeaseTiming timing) {
        Duration ttl = timing.ttl();
        BlobId id = store.id(name);
        LockInfo seen = null;
        for (int i = 0; i <= MAX_IMMEDIATE_RETRIES; i++) {
            long sent = nanoTime.getAsLong();
            Instant now = clock.instant();
            try {
                Blob created = store.create(
                        LockObject.newLockObject(bucket, id.getName(), me, leaseId, ttl, now, engine.estimatedGcsNow().plus(ttl)));
                GcsLease lease = engine.newLease(name, created, leaseId, now, sent, timing);
                if (arrivedPastItsDeadline(lease, created, store)) {
                    continue;
                }
                return new Result(lease, null);
            } catch (StorageException e) {
                if (e.getCode() != 412) {
                    if (e.getCode() != 404) {
                        unknownCreates.record(sent); // a lost reply or a timeout: it may have committed
                    }
                    if (e.getCode() == 404) {
                        throw new GcsLockException(name, "bucket '" + bucket + "' does not exist (GCS answered 404 "
                                + "to creating lock object '" + id.getName() + "')", e);
                    }
                    throw e;
                }
            }
            // 412: the object exists. Read it once to learn whose it is and when it was last written.
            Blob current = store.read(id);
            if (current == null) {
                continue; // released between our create and our read: try again at once
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
                    Confirmed confirmed = confirmAdopted(current, store, ttl);
                    if (confirmed == null) {
                        continue; // deleted or changed since our read: someone took it over; look again
                    }
                    GcsLease lease = engine.newLease(name, confirmed.blob(), leaseId, now, confirmed.sentNanos(), timing);
                    if (arrivedPastItsDeadline(lease, confirmed.blob(), store)) {
                        continue;
                    }
                    log.debug("lock '{}': adopted our own create whose reply was lost, after confirming it", name);
                    return new Result(lease, null);
                }
                GcsLease lease = engine.newLease(name, current, leaseId, now, writtenFrom, timing);
                if (arrivedPastItsDeadline(lease, current, store)) {
                    continue;
                }
                log.debug("lock '{}': adopted our own create whose reply was lost", name);
                return new Result(lease, null);
            }
            if (me.owner().equals(owner) && !engine.isLive(currentLease)) {
                // Ours from a lease this process no longer has (a release that failed, a crashed thread):
                // nobody else can be using it, so retake it at once instead of waiting for the TTL.
                log.info("lock '{}': removing a lock object this process leaked earlier (lease {})", name, currentLease);
                store.deleteIfUnchanged(current);
                continue;
            }
            if (seen.stale()) {
                // DESIGN.md rule 5: preconditions on generation and metageneration: if the holder refreshed,
                // or another contender took over between our GET and this DELETE, the delete fails.
                if (store.deleteIfUnchanged(current)) {
                    log.info("lock '{}': took over from {} which has not refreshed since {} (TTL {})", name, owner,
                            seen.updated(), seen.ttl());
                    engine.tookOver(name, seen);
                }
                continue;
            }
            return new Result(null, seen);
        }
        return new Result(null, seen);
    }

    /**
     * DESIGN.md rule 11 at hand-out: whether {@code lease}'s deadline had already passed when the reply that
     * made it arrived (a create or confirm reply that was slow — within the operation timeout — or read by a
     * starved thread). Other processes may already judge the object stale and have taken it over, so such a
     * lease is never handed out, not even as an unhealthy one (a caller that does not check would run its
     * job beside the next holder). The object is deleted guarded by what we saw, so a takeover that already
     * happened is never undone; if that delete fails, the object is ours with no live lease, and the next
     * attempt retakes it (rule 4).
     */
    private boolean arrivedPastItsDeadline(GcsLease lease, Blob object, LockStore store) {
        if (nanoTime.getAsLong() - lease.deadlineNanos() < 0) {
            return false;
        }
        log.info("lock '{}': the reply that acquired it came after its deadline ({} after the request was sent); "
                + "not handing it out, deleting it", lease.name(), lease.timing().ttl().minus(lease.timing().safetyMargin()));
        try {
            store.deleteIfUnchanged(object);
        } catch (StorageException e) {
            log.debug("lock '{}': could not delete the late lock object; the next attempt retakes it", lease.name(), e);
        }
        return true;
    }

    private record Confirmed(Blob blob, long sentNanos) {
    }

    /**
     * Refreshes an adopted object of ours with a PATCH guarded by the generation and metageneration we
     * read; the result is dated from the PATCH's send time. Null if the object changed or vanished since
     * our read (412/404): another process found it stale and took it over. Other errors are thrown
     * (the outcome is unknown; the next attempt reads the object again).
     */
    private Confirmed confirmAdopted(Blob current, LockStore store, Duration ttl) {
        long sent = nanoTime.getAsLong();
        BlobInfo change = BlobInfo.newBuilder(current.getBlobId())
                .setMetadata(Map.of(LockObject.EXPIRES, engine.estimatedGcsNow().plus(ttl).toString(),
                        LockObject.REFRESH, ProcessIdentity.randomHex(6)))
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

    /** One read: the holder if the lock is plainly held by another owner and not stale; else null (worth an attempt). */
    LockInfo stillHeldBySomeoneElse(String name, LockStore store) {
        Blob current = store.read(store.id(name));
        if (current == null) {
            return null;
        }
        LockInfo info = engine.info(name, current);
        return me.owner().equals(info.owner()) || info.stale() ? null : info;
    }
}
