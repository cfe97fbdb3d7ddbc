package io.github.gcslock;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The observed-time half of DESIGN.md rule 6: for each lock object this process has read, the version
 * (generation, metageneration) it saw and when, on the local monotonic clock, it first saw that version.
 *
 * <p>Why it exists: the GCS-time estimate keeps anchors only for a window of two TTLs (so that a drifting
 * monotonic clock cannot push its error past the safety margin). A process that reads a dead holder's
 * object less often than that — an hourly {@code @Scheduled} job against the default 5-minute TTL — gets,
 * at each look, only the anchor of the read it has just made: the dead object's own {@code updated}.
 * Without this record such a process would never prove the object stale, and a crashed holder's lock
 * would never be taken over by it.
 *
 * <p>Why it is safe: a version read at monotonic time {@code t0} was written no later than {@code t0}. If
 * the same version is read again at {@code t1}, nobody wrote the object in between (metagenerations only
 * grow; a re-created object gets a new, unique generation), so its holder has not refreshed for at least
 * {@code t1 − t0}. A live holder writes every refresh interval, far more often than its TTL; one that
 * cannot write loses its lease {@code safetyMargin} before the TTL (rule 11), and that margin also covers
 * this clock's rate error over one TTL.
 */
final class UnchangedVersions {

    /** Bound on remembered objects; the least recently read one is forgotten first (then observed afresh). */
    private static final int MAX_OBJECTS = 4096;

    private record Seen(long generation, long metageneration, long firstSeenNanos) {
    }

    /** In order of last record (moved to the end by {@link #unchangedForNanos}, never by {@link #peek}). */
    private final Map<String, Seen> byObject = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Seen> eldest) {
            return size() > MAX_OBJECTS;
        }
    };

    /**
     * Records a read of {@code objectName} at version (generation, metageneration) made by {@code nowNanos},
     * and returns for how long, on the monotonic clock, this process has seen that version unchanged
     * (0 for a version seen for the first time).
     */
    synchronized long unchangedForNanos(String objectName, long generation, long metageneration, long nowNanos) {
        Seen seen = byObject.remove(objectName); // re-inserted: the most recently recorded
        if (seen == null || seen.generation != generation || seen.metageneration != metageneration) {
            byObject.put(objectName, new Seen(generation, metageneration, nowNanos));
            return 0;
        }
        byObject.put(objectName, seen);
        return nowNanos - seen.firstSeenNanos;
    }

    /**
     * Like {@link #unchangedForNanos} but records nothing and forgets nothing: for looks that are not
     * acquisitions ({@code inspect()}, {@code list()}), which must never push out what an acquisition
     * recorded (a list of more objects than this record holds would make every acquisition see its dead
     * holder's version for the first time, and never prove it stale).
     */
    synchronized long peek(String objectName, long generation, long metageneration, long nowNanos) {
        Seen seen = byObject.get(objectName);
        if (seen == null || seen.generation != generation || seen.metageneration != metageneration) {
            return 0;
        }
        return nowNanos - seen.firstSeenNanos;
    }
}
