package io.github.gcslock;

import java.time.Duration;
import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * A lower bound on GCS's current time that never reads the local wall clock (seed 002: clocks drift,
 * are stepped, and VMs pause; a host whose clock is minutes off must neither take over a live lock
 * nor wait forever for a dead one).
 *
 * <p>Every object GCS returns carries {@code updated} in GCS time, and GCS wrote it before the reply
 * reached us. So at the moment a reply arrives, GCS time is at least {@code updated}; from then on it
 * advances at the rate of our monotonic clock. The anchor kept is the one giving the highest bound.
 * Our own writes give the tightest anchors (error at most one round trip); an old lock object read
 * for the first time gives a weak one, and then staleness is proven after one TTL of our own
 * observation at the latest (the client-go "observed time" rule).
 */
final class GcsTimeEstimator {

    private final LongSupplier nanoTime;
    private long anchorGcsMillis = Long.MIN_VALUE;
    private long anchorNanos;

    GcsTimeEstimator(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** Records that a reply received at {@code receivedNanos} showed an object written at {@code updated} (GCS time). */
    synchronized void observe(Instant updated, long receivedNanos) {
        if (updated == null) {
            return;
        }
        long candidate = updated.toEpochMilli();
        if (anchorGcsMillis == Long.MIN_VALUE || candidate > boundAt(receivedNanos)) {
            anchorGcsMillis = candidate;
            anchorNanos = receivedNanos;
        }
    }

    private long boundAt(long nanos) {
        return anchorGcsMillis + Math.floorDiv(nanos - anchorNanos, 1_000_000L);
    }

    /** GCS time is at least this now; {@code null} before anything was observed. */
    synchronized Instant lowerBoundNow() {
        if (anchorGcsMillis == Long.MIN_VALUE) {
            return null;
        }
        return Instant.ofEpochMilli(boundAt(nanoTime.getAsLong()));
    }

    /**
     * Whether GCS time has provably passed {@code updated + ttl}: the holder has not written the object
     * for longer than its TTL. Never true on a guess.
     */
    boolean isProvablyExpired(Instant updated, Duration ttl) {
        Instant now = lowerBoundNow();
        return now != null && updated != null && now.isAfter(updated.plus(ttl));
    }
}
