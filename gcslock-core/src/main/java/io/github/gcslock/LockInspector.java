package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.StorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Reads lock objects for people and for the acquire protocol: {@link LockInfo} (holder, timestamps, fencing
 * token, staleness) from an object, {@code inspect}, {@code list}, and the administrator's
 * {@code forceRelease}. Every object it describes feeds the {@link FencingRecord} (rule 18).
 */
final class LockInspector {

    private static final Logger log = LoggerFactory.getLogger(LockInspector.class);

    private final LockStore store;
    private final String prefix;
    /** The TTL of an object that does not carry its own. */
    private final Duration defaultTtl;
    private final ProcessIdentity me;
    private final LongSupplier nanoTime;
    private final LocalHolds holds;
    private final FencingRecord fencing;
    private final UnchangedVersions unchangedVersions = new UnchangedVersions();

    LockInspector(LockStore store, String prefix, Duration defaultTtl, ProcessIdentity me, LongSupplier nanoTime,
                  LocalHolds holds, FencingRecord fencing) {
        this.store = store;
        this.prefix = prefix;
        this.defaultTtl = defaultTtl;
        this.me = me;
        this.nanoTime = nanoTime;
        this.holds = holds;
        this.fencing = fencing;
    }

    Optional<LockInfo> inspect(String name) {
        LockObject.validateName(prefix, name);
        try {
            Blob b = store.read(store.id(name));
            if (b == null) {
                return Optional.empty();
            }
            return Optional.of(info(name, b, false));
        } catch (StorageException e) {
            throw store.unavailable(name, e);
        }
    }

    List<LockInfo> list() {
        List<LockInfo> out = new ArrayList<>();
        try {
            for (Blob b : store.list()) {
                out.add(info(b.getName().substring(prefix.length()), b, false));
            }
        } catch (StorageException e) {
            throw store.unavailable(null, e);
        }
        return out;
    }

    /** Deletes {@code name}'s object if it is still that generation and metageneration; true if this call did. */
    boolean forceRelease(String name, long fencingToken, long metageneration) {
        LockObject.validateName(prefix, name);
        try {
            boolean deleted = store.delete(store.id(name), fencingToken, metageneration);
            if (deleted) {
                log.warn("lock '{}' (fencing token {}) was force-released", name, fencingToken);
            }
            return deleted;
        } catch (StorageException e) {
            if (e.getCode() == 412) {
                return false;
            }
            throw store.unavailable(name, e);
        }
    }

    /** What the lock object {@code b} of lock {@code name} says, judged now, for an acquisition (rule 6: recorded). */
    LockInfo info(String name, Blob b) {
        return info(name, b, true);
    }

    /**
     * What the lock object {@code b} of lock {@code name} says, judged now (stale or not, ours or not).
     * {@code record}: whether this look counts for the observed-time record — an acquisition's does; an
     * inspection only reads that record, so that looking at locks never makes acquiring them blind.
     */
    private LockInfo info(String name, Blob b, boolean record) {
        Duration objectTtl = LockObject.ttl(b, defaultTtl);
        Instant updated = LockObject.updated(b);
        String leaseId = LockObject.leaseId(b);
        if (b.getGeneration() != null) {
            fencing.seen(name, b.getGeneration(), leaseId);
        }
        long generation = b.getGeneration() == null ? 0 : b.getGeneration();
        long metageneration = b.getMetageneration() == null ? 0 : b.getMetageneration();
        // Stale when GCS time provably passed updated + ttl, or when this process has itself seen this
        // version unchanged for longer than its TTL (rule 6: observed time; needed because the GCS-time
        // anchors expire after two TTLs, and a process that looks less often would never prove it).
        boolean stale = store.gcsTime().isProvablyExpired(updated, objectTtl)
                || (record ? unchangedVersions.unchangedForNanos(b.getName(), generation, metageneration, nanoTime.getAsLong())
                        : unchangedVersions.peek(b.getName(), generation, metageneration, nanoTime.getAsLong()))
                        > objectTtl.toNanos();
        return new LockInfo(name, b.getName(), LockObject.owner(b), leaseId, LockObject.meta(b, LockObject.HOST),
                LockObject.meta(b, LockObject.PID), LockObject.meta(b, LockObject.APP), LockObject.meta(b, LockObject.THREAD),
                LockObject.instant(b, LockObject.ACQUIRED_AT), updated, LockObject.instant(b, LockObject.EXPIRES), objectTtl,
                generation, metageneration, stale,
                me.owner().equals(LockObject.owner(b)) && leaseId != null && holds.isLive(leaseId));
    }
}
