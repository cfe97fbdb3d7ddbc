package io.github.gcslock;

import com.google.cloud.storage.StorageException;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * How long a waiting {@code acquire} sleeps between attempts (DESIGN.md rule 16): functions of what the
 * last attempt saw, with jitter so that contenders refused together do not retry together.
 *
 * @param backoff         capped exponential backoff with full jitter
 * @param writeRateWindow how long GCS's per-object write limit lasts (about one write per second)
 */
record WaitPacing(Backoff backoff, Duration writeRateWindow) {

    /**
     * The sleep after attempt number {@code attempt} (0-based) that ended with {@code lastError} (null for
     * none) having seen {@code holder} (null if none); {@code gcsNow} is asked only when needed (null if
     * GCS time is unknown).
     */
    Duration next(StorageException lastError, LockInfo holder, Supplier<Instant> gcsNow, int attempt) {
        // A 429 on the create means the object was written (released) under a second ago: the
        // write limit will refuse every create until that second is over, so wait for it.
        return lastError != null && lastError.getCode() == 429 ? writeWindowDelay()
                : lastError == null && holder != null ? pollDelay(holder, gcsNow.get(), attempt) : backoff.delay(attempt);
    }

    /**
     * How long a waiter sleeps after seeing {@code holder}: its backoff, but not less than until two write
     * windows after the holder's last write (GCS time). With about one write per second per object, the
     * holder's delete and the next create each need a window, so polling sooner cannot succeed; this
     * keeps short holds from costing every waiter a poll or two per handoff.
     */
    Duration pollDelay(LockInfo holder, Instant gcsNow, int attempt) {
        Duration backoffDelay = backoff.delay(attempt);
        if (holder.updated() == null || gcsNow == null || writeRateWindow.isZero()) {
            return backoffDelay;
        }
        Duration untilUseful = Duration.between(gcsNow, holder.updated().plus(writeRateWindow.multipliedBy(2)));
        if (untilUseful.isNegative()) {
            return backoffDelay;
        }
        Duration useful = untilUseful.plus(writeWindowDelay().minus(writeRateWindow)); // + jitter
        return useful.compareTo(backoffDelay) > 0 ? useful : backoffDelay;
    }

    /** The write window plus up to 10 % jitter, so that contenders refused together do not retry together. */
    Duration writeWindowDelay() {
        long jitter = ThreadLocalRandom.current().nextLong(writeRateWindow.toNanos() / 10 + 1);
        return writeRateWindow.plusNanos(jitter);
    }
}
