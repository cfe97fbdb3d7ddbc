package io.github.gcslock;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per lock name, what this process last saw of <em>other</em> processes holding it (DESIGN.md rule 16): the
 * economy of acquiring rests on it, never the safety.
 *
 * <ul>
 * <li><b>Read first, or the create alone.</b> A name last seen held by someone else is most likely still
 * held: a waiter's next look is one read (1 request to learn "held") instead of a create that is refused and
 * a read (2); a one-shot attempt while the name's objects are known young (seen less than a quarter TTL ago,
 * and never past the moment the object last read could be stale) sends the create alone and refuses a 412
 * unread (1 request either way); otherwise it reads first. A name
 * this process held last, saw free, or never looked at starts with the create as before.</li>
 * <li><b>Waiting across calls.</b> A process that keeps seeing a name held — a follower calling
 * {@code tryLock(500 ms)} back to back, a job waiting in a loop — has been waiting since the first of those
 * looks ({@link Sighting#heldSinceNanos}), however many calls it took; the next look is due at
 * {@link Sighting#nextLookNanos}, and a new waiting call starts from there instead of with a request.</li>
 * <li><b>Our own creates of unknown outcome.</b> A create of an earlier call that timed out may still
 * commit (a slow request) after this process has read the name free; then a create of ours gets 412 from
 * our own object. Such a name keeps its second read ({@link #mayHaveUnseenCreate}).</li>
 * </ul>
 *
 * <p>Bounded like the fencing-token memory: the least recently used names are forgotten (names may be per
 * tenant). Forgetting costs requests, never safety: a forgotten name starts with a create.
 */
final class ContentionHistory {

    private static final int MAX_NAMES = 10_000;

    /**
     * One name seen held by another process.
     *
     * @param holder         what the last look saw (null if the create was refused without a read)
     * @param heldSinceNanos the first look of this unbroken run of looks that all saw it held (monotonic)
     * @param lastLookNanos  when the last of them was sent
     * @param nextLookNanos  when the next look is due (the waiting pace of rule 16)
     * @param paced          the last look was made by a waiting call: a later waiting call keeps its pace (a
     *                       one-shot look — tryAcquire, a SKIP — sets no pace: the next waiting call looks at once)
     * @param youngUntilNanos until when this process knows that any object of the name is too young to be
     *                        stale: a quarter TTL after a read that found a live holder, but never past the
     *                        moment that object could first be stale (its updated + its TTL, in the GCS-time
     *                        bound); a quarter TTL after the name was seen free (a create refused unread
     *                        teaches nothing and leaves it as it was)
     */
    record Sighting(LockInfo holder, long heldSinceNanos, long lastLookNanos, long nextLookNanos, boolean paced,
                    long youngUntilNanos) {
        /** Whether at {@code nowNanos} every object of the name is still known too young to be stale. */
        boolean knownYoungAt(long nowNanos) {
            return nowNanos - youngUntilNanos < 0;
        }

        /** How long this process has been seeing the name held, at {@code nowNanos}. */
        long waitedNanos(long nowNanos) {
            return Math.max(0, nowNanos - heldSinceNanos);
        }
    }

    private final Map<String, Sighting> held = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Sighting> eldest) {
            return size() > MAX_NAMES;
        }
    };

    /** This process's last release of a name whose DELETE deleted its object. */
    private final Map<String, CleanRelease> cleanReleases = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CleanRelease> eldest) {
            return size() > MAX_NAMES;
        }
    };

    /** Send times of creates (of earlier calls) whose outcome is unknown, per name. */
    private final Map<String, Long> unknownCreates = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > MAX_NAMES;
        }
    };

    /** The last sighting of {@code name} held by another process, or null (free, ours, or not looked at). */
    synchronized Sighting sighting(String name) {
        return held.get(name);
    }

    /**
     * A look sent at {@code lookNanos} saw {@code name} held by another process ({@code holder}; null when the
     * create was refused without reading). The run of looks goes on from the earlier sighting if there is one
     * and this look came no later than one more scheduled interval after the look that was due (the process
     * kept looking, call after call); otherwise — a job that asks once an hour — it starts here. {@code
     * youngUntilNanos}: see {@link Sighting#youngUntilNanos}.
     * Returns the sighting; its next look is not yet set (see {@link #nextLookAt}).
     */
    synchronized Sighting sawHeld(String name, LockInfo holder, long lookNanos, long youngUntilNanos) {
        Sighting before = held.get(name);
        long since = before != null
                && lookNanos - before.nextLookNanos <= Math.max(0, before.nextLookNanos - before.lastLookNanos)
                ? before.heldSinceNanos : lookNanos;
        Sighting now = new Sighting(holder != null ? holder : before != null ? before.holder : null, since, lookNanos,
                lookNanos, false, youngUntilNanos);
        held.put(name, now);
        return now;
    }

    /**
     * The next look at {@code name} is due at {@code nanos} (kept only while it is seen held); {@code paced}: the
     * look was a waiting call's, so a later waiting call keeps this pace.
     */
    synchronized void nextLookAt(String name, long nanos, boolean paced) {
        Sighting s = held.get(name);
        if (s != null) {
            held.put(name, new Sighting(s.holder, s.heldSinceNanos, s.lastLookNanos, nanos, paced, s.youngUntilNanos));
        }
    }

    /** This process saw {@code name} free, or acquired it: the next attempt creates first. */
    synchronized void sawFreeOrAcquired(String name) {
        held.remove(name);
        cleanReleases.remove(name);
    }

    /**
     * This process released {@code name} and its guarded DELETE, sent at {@code sentNanos}, deleted its object:
     * any object of the name from then on is younger than that, and none of ours is left behind (so a one-shot
     * that loses the next race needs no read to tell a leak of ours or a stale object, rule 16).
     */
    synchronized void releasedCleanly(String name, long sentNanos) {
        cleanReleases.put(name, new CleanRelease(sentNanos));
    }

    /** This process's last clean release of {@code name} ({@link #releasedCleanly}), or null. */
    synchronized CleanRelease cleanRelease(String name) {
        return cleanReleases.get(name);
    }

    /** A release whose DELETE, sent at {@code sentNanos}, deleted our object. */
    record CleanRelease(long sentNanos) {
    }

    /** A create of {@code name} sent at {@code sentNanos} ended without us learning whether it committed. */
    synchronized void createOutcomeUnknown(String name, long sentNanos) {
        Long before = unknownCreates.get(name);
        if (before == null || sentNanos - before > 0) {
            unknownCreates.put(name, sentNanos); // the latest matters: it is the one that may commit last
        }
    }

    /**
     * Whether a create of {@code name} of an earlier call, of unknown outcome, may still commit: sent less
     * than {@code withinNanos} before {@code nowNanos}. A request is not served later than that (the window
     * is the lock's TTL); past it the record is dropped.
     */
    synchronized boolean mayHaveUnseenCreate(String name, long nowNanos, long withinNanos) {
        Long sent = unknownCreates.get(name);
        if (sent == null) {
            return false;
        }
        if (nowNanos - sent > withinNanos) {
            unknownCreates.remove(name);
            return false;
        }
        return true;
    }
}
