package io.github.gcslock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.LongSupplier;

/**
 * An estimate of GCS's current time (DESIGN.md rule 6) that never reads the local wall clock (clocks are off, get
 * stepped, and VMs pause; a host whose clock is minutes off must neither take over a live lock nor
 * wait forever for a dead one).
 *
 * <p>Every object GCS returns carries {@code updated} in GCS time, and GCS wrote it before the reply
 * reached us. So at the moment a reply arrives, GCS time is at least {@code updated} (an <em>anchor</em>);
 * from then on it advances at the rate of our monotonic clock. Our own writes give the tightest anchors
 * (error at most one round trip); an old lock object read for the first time gives a weak one. A dead
 * lock is then proven stale after one TTL of our own observation at the latest — by this estimate while
 * its anchors live, and by {@link UnchangedVersions} (the same version seen unchanged for a TTL) for a
 * process that looks less often than the window.
 *
 * <h2>Why anchors expire: the monotonic clock drifts too</h2>
 * "Advances at the rate of our monotonic clock" is only true of a perfect clock. If ours runs fast by
 * ε, an anchor taken {@code a} ago overshoots real GCS time by ε × a. Keeping the best anchor forever
 * (or the maximum of all anchors ever seen) lets that error grow without bound, and it always errs the
 * dangerous way: the race is
 * <ol>
 * <li>a contender takes an anchor, then keeps reading the holder's object while it waits;</li>
 * <li>each read shows {@code updated} at most one refresh interval old, but the old anchor's
 *     bound, grown at (1 + ε) × real time, is already higher, so the fresh read never replaces it;</li>
 * <li>after {@code (ttl − refresh interval) / ε} the bound passes {@code updated + ttl} of a lock that
 *     was refreshed a moment ago: the contender deems it stale, its guarded delete succeeds (the
 *     object is unchanged since the read) and two processes hold the lock. With 30 ppm and the
 *     default TTL this takes about 100 days of uptime; with a 20 % fast clock, a few TTLs.</li>
 * </ol>
 * So anchors are kept only for a recent window (two TTLs, and at least two of any TTL a lock object was
 * judged with, so that the observed-time rule can still prove a dead lock stale): the bound is the
 * highest one among anchors taken within the window, and drift adds at most ε × window to it, however
 * long the process runs. When no anchor is left (nothing read for a whole window) there is no estimate,
 * and nothing is judged stale until a fresh reply gives one.
 */
final class GcsTimeEstimator {

    /** One reply: GCS time was at least {@code gcsMillis} when our monotonic clock read {@code nanos}. */
    private record Anchor(long gcsMillis, long nanos) {
        long boundAt(long atNanos) {
            return gcsMillis + Math.floorDiv(atNanos - nanos, 1_000_000L);
        }
    }

    /** How many anchors at most a window holds (consecutive kept anchors are at least window / this apart). */
    private static final int SLOTS = 16;

    private final LongSupplier nanoTime;
    /**
     * Anchors taken within the window, oldest first, each giving a strictly lower bound than the one
     * before it (an older anchor whose bound a newer one reaches is useless: it would also expire first).
     */
    private final Deque<Anchor> anchors = new ArrayDeque<>();
    private long windowNanos;

    GcsTimeEstimator(LongSupplier nanoTime, Duration window) {
        this.nanoTime = nanoTime;
        this.windowNanos = window.toNanos();
    }

    /** Records that a reply received at {@code receivedNanos} showed an object written at {@code updated} (GCS time). */
    synchronized void observe(Instant updated, long receivedNanos) {
        if (updated == null) {
            return;
        }
        expire(receivedNanos);
        Anchor fresh = new Anchor(updated.toEpochMilli(), receivedNanos);
        Anchor newest = anchors.peekLast();
        if (newest != null && fresh.gcsMillis <= newest.boundAt(receivedNanos)
                && receivedNanos - newest.nanos < windowNanos / SLOTS) {
            return; // no better than an anchor taken just before, which expires only a little earlier
        }
        // Anchors whose bound the fresh one reaches are useless from now on (same rate, expire earlier).
        while (!anchors.isEmpty() && anchors.peekLast().boundAt(receivedNanos) <= fresh.gcsMillis) {
            anchors.pollLast();
        }
        anchors.addLast(fresh);
    }

    private void expire(long nowNanos) {
        while (!anchors.isEmpty() && nowNanos - anchors.peekFirst().nanos > windowNanos) {
            anchors.pollFirst();
        }
    }

    /** GCS time is at least this now (up to drift × window); {@code null} when no anchor of the window is left. */
    synchronized Instant lowerBoundNow() {
        long now = nanoTime.getAsLong();
        expire(now);
        Anchor best = anchors.peekFirst();
        return best == null ? null : Instant.ofEpochMilli(best.boundAt(now));
    }

    /**
     * Whether GCS time has provably passed {@code updated + ttl}: the holder has not written the object
     * for longer than its TTL. Never true on a guess.
     */
    boolean isProvablyExpired(Instant updated, Duration ttl) {
        widenFor(ttl);
        Instant now = lowerBoundNow();
        return now != null && updated != null && now.isAfter(updated.plus(ttl));
    }

    /** The observed-time rule needs anchors that live longer than the TTL being judged. */
    private synchronized void widenFor(Duration ttl) {
        long needed = ttl.multipliedBy(2).toNanos();
        if (needed > windowNanos) {
            windowNanos = needed;
        }
    }
}
