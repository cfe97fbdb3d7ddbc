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
 * judged with): the bound is the highest one among anchors taken within the window, and drift adds at
 * most ε × window to it, however long the process runs. When no anchor is left (nothing read for a whole
 * window) there is no estimate, and nothing is judged stale until a fresh reply gives one.
 *
 * <h2>Per lock: a lock is judged on anchors of its own window</h2>
 * Keeping anchors for twice the longest TTL ever judged is not enough: one look at a lock held with a 1 h
 * TTL would let every other lock be judged on anchors up to 2 h old, and a 2 s lock's safety margin does
 * not cover two hours of drift (a contender whose clock ran 20 % fast took a live 2 s lock over). So
 * {@link #isProvablyExpired} judges an object with TTL {@code t} only on anchors taken within {@code 2t}:
 * the error stays within ε × 2 × (that lock's TTL). Anchors are kept for the widest window in use and
 * spaced for the narrowest, at most {@value #MAX_ANCHORS} of them (a fresh anchor that improves nothing is
 * then dropped — fewer anchors only ever lower the bound).
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

    /** Bound on the anchors kept, whatever the spread of the windows in use. */
    static final int MAX_ANCHORS = 256;

    private final LongSupplier nanoTime;
    /**
     * Anchors taken within the window, oldest first, each giving a strictly lower bound than the one
     * before it (an older anchor whose bound a newer one reaches is useless: it would also expire first).
     */
    private final Deque<Anchor> anchors = new ArrayDeque<>();
    /** How long anchors are kept: the widest window in use. */
    private long windowNanos;
    /** The narrowest window in use: anchors are spaced for it. */
    private long narrowestNanos;

    GcsTimeEstimator(LongSupplier nanoTime, Duration window) {
        this.nanoTime = nanoTime;
        this.windowNanos = window.toNanos();
        this.narrowestNanos = windowNanos;
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
                && receivedNanos - newest.nanos < narrowestNanos / SLOTS) {
            return; // no better than an anchor taken just before, which expires only a little earlier
        }
        // Anchors whose bound the fresh one reaches are useless from now on (same rate, expire earlier).
        while (!anchors.isEmpty() && anchors.peekLast().boundAt(receivedNanos) <= fresh.gcsMillis) {
            anchors.pollLast();
        }
        if (anchors.size() >= MAX_ANCHORS) {
            return; // full, and it improves nothing: the window's older anchors bound GCS time higher
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
        long window = windowFor(ttl);
        Instant now = lowerBoundWithin(window);
        return now != null && updated != null && now.isAfter(updated.plus(ttl));
    }

    /** A lock of TTL {@code ttl} is judged on anchors of the last two TTLs: kept that long, spaced for it. */
    private synchronized long windowFor(Duration ttl) {
        long needed = ttl.multipliedBy(2).toNanos();
        if (needed > windowNanos) {
            windowNanos = needed;
        }
        if (needed < narrowestNanos) {
            narrowestNanos = needed;
        }
        return needed;
    }

    /** GCS time is at least this now, by anchors taken within {@code window} (drift adds at most ε × window); or null. */
    private synchronized Instant lowerBoundWithin(long window) {
        long now = nanoTime.getAsLong();
        expire(now);
        // Oldest first, each bounding GCS time lower than the one before: the first within the window is the best.
        for (Anchor a : anchors) {
            if (now - a.nanos <= window) {
                return Instant.ofEpochMilli(a.boundAt(now));
            }
        }
        return null;
    }
}
