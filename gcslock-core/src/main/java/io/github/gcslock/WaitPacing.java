package io.github.gcslock;

import com.google.cloud.storage.StorageException;

import java.time.Duration;
import java.time.Instant;

/**
 * How long a waiting {@code acquire} sleeps between attempts (DESIGN.md rule 16): functions of what the
 * last attempt saw and of how long this process has been waiting, with jitter so that contenders refused
 * together do not retry together.
 *
 * @param backoff         capped exponential backoff with full jitter (after errors), and the bounds of the poll interval
 * @param writeRateWindow how long GCS's per-object write limit lasts (about one write per second)
 * @param runtime         the source of the jitter ({@link EngineRuntime#random()})
 */
record WaitPacing(Backoff backoff, Duration writeRateWindow, EngineRuntime runtime) {

    /** The poll interval's cap is this many times the time waited so far (within its bounds). */
    static final int WAITED_FACTOR = 2;
    /** ... and stays at most the holder's TTL divided by this: at least this many looks per TTL. */
    static final int LOOKS_PER_TTL = 4;

    /**
     * The sleep after attempt number {@code attempt} (0-based) that ended with {@code lastError} (not null):
     * after a 429 one write window, after other errors the backoff.
     */
    Duration afterError(StorageException lastError, int attempt) {
        // A 429 on the create means the object was written (released) under a second ago: the
        // write limit will refuse every create until that second is over, so wait for it.
        return lastError.getCode() == 429 ? writeWindowDelay() : backoffDelay(attempt);
    }

    /** The backoff's sleep before retry number {@code attempt} (0-based), with its jitter. */
    Duration backoffDelay(int attempt) {
        return backoff.delay(attempt, runtime.random());
    }

    /**
     * How long a waiter sleeps after seeing {@code holder} (null if its create was refused without a read),
     * having waited {@code waitedNanos} so far (over earlier calls too): a jittered interval in
     * [cap/2, cap] where the cap grows with the time waited ({@link #pollCap}), and not less than until two
     * write windows after the holder's last write (GCS time). With about one write per second per object,
     * the holder's delete and the next create each need a window, so polling sooner cannot succeed; this
     * keeps short holds from costing every waiter a poll or two per handoff.
     */
    Duration pollDelay(LockInfo holder, Instant gcsNow, long waitedNanos) {
        long cap = pollCap(holder == null ? null : holder.ttl(), waitedNanos).toNanos();
        Duration interval = Duration.ofNanos(cap / 2 + runtime.random().nextLong(cap - cap / 2 + 1));
        if (holder == null || holder.updated() == null || gcsNow == null || writeRateWindow.isZero()) {
            return interval;
        }
        Duration untilUseful = Duration.between(gcsNow, holder.updated().plus(writeRateWindow.multipliedBy(2)));
        if (untilUseful.isNegative()) {
            return interval;
        }
        Duration useful = untilUseful.plus(writeWindowDelay().minus(writeRateWindow)); // + jitter
        return useful.compareTo(interval) > 0 ? useful : interval;
    }

    /**
     * The cap of the poll interval of a waiter that has waited {@code waitedNanos} for a holder whose TTL is
     * {@code holderTtl} (null if unknown): twice the time waited, at least the backoff's initial delay (the
     * first polls stay quick, for short holds), at most the backoff's cap and a quarter of the holder's TTL.
     * Why twice the time waited: it is the pace of the capped exponential backoff it replaces (each poll
     * doubling the cap, the cap after n polls is about twice the time waited), so a wait of W costs
     * O(log W) looks; but it belongs to the wait, not to one call, so back-to-back short calls keep it.
     * With k waiters the first look after a release comes after about cap/k. Why the bounds: the backoff cap bounds the delay after a release and after a kill
     * (failover ≤ TTL + cap); a quarter of the TTL keeps several looks per TTL, so a dead holder with a short
     * TTL is seen stale soon after it is (rule 6), and each look anchors GCS time within its window.
     */
    Duration pollCap(Duration holderTtl, long waitedNanos) {
        long upper = backoff.max().toNanos();
        if (holderTtl != null && holderTtl.toNanos() > 0) {
            upper = Math.min(upper, holderTtl.toNanos() / LOOKS_PER_TTL);
        }
        long cap = Math.max(backoff.initial().toNanos(), Math.min(waitedNanos, Long.MAX_VALUE / WAITED_FACTOR) * WAITED_FACTOR);
        return Duration.ofNanos(Math.max(1, Math.min(upper, cap)));
    }

    /** The write window plus up to 10 % jitter, so that contenders refused together do not retry together. */
    Duration writeWindowDelay() {
        long jitter = runtime.random().nextLong(writeRateWindow.toNanos() / 10 + 1);
        return writeRateWindow.plusNanos(jitter);
    }
}
