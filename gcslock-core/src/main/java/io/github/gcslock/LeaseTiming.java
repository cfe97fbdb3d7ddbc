package io.github.gcslock;

import java.time.Duration;

/**
 * The timing of one lease: its TTL (stored in the lock object, so that other processes judge its
 * staleness by it), the interval between its refreshes, and the safety margin by which its deadline
 * (DESIGN.md rule 11) comes before the TTL. The registry's own settings are one timing; an acquisition
 * with its own TTL gets one derived from that TTL by the same rules as the registry's defaults.
 */
record LeaseTiming(Duration ttl, Duration refreshInterval, Duration safetyMargin) {

    /** How long after the last confirmed refresh the lease declares itself lost. */
    long deadlineSpanNanos() {
        return ttl.minus(safetyMargin).toNanos();
    }

    /** TTL/8 floored to whole seconds, or TTL/8 itself when that is under a second (the registry's default rule). */
    static Duration defaultRefreshInterval(Duration ttl) {
        Duration eighth = ttl.dividedBy(8);
        return eighth.compareTo(Duration.ofSeconds(1)) < 0 ? eighth : Duration.ofSeconds(eighth.toSeconds());
    }

    /** The smaller of TTL/5 and half of what the TTL leaves after one refresh interval (the registry's default rule). */
    static Duration defaultSafetyMargin(Duration ttl, Duration refreshInterval) {
        Duration fifth = ttl.dividedBy(5);
        Duration half = ttl.minus(refreshInterval).dividedBy(2);
        return fifth.compareTo(half) < 0 ? fifth : half;
    }

    /**
     * The timing of an acquisition of {@code lockName} with its own {@code ttl}, derived by the registry's
     * default rules and checked by the registry's rules.
     *
     * @throws GcsLockConfigurationException (setting {@code ttl}) naming the lock and the rule broken
     */
    static LeaseTiming derive(String lockName, Duration ttl, int maxRefreshFailures) {
        return derive(lockName, ttl, maxRefreshFailures, Duration.ZERO);
    }

    /**
     * As {@link #derive(String, Duration, int)}, and refused when not even one refresh, a write window after the
     * create, can come before the lease's deadline (rule 21).
     *
     * @throws GcsLockConfigurationException (setting {@code ttl}) naming the lock, the rule broken and the smallest TTL
     */
    static LeaseTiming derive(String lockName, Duration ttl, int maxRefreshFailures, Duration writeRateWindow) {
        if (ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new GcsLockConfigurationException("ttl", "the TTL of lock '" + lockName + "' must be a positive duration, got " + ttl);
        }
        if (ttl.compareTo(LockObject.MAX_TTL) > 0) {
            throw new GcsLockConfigurationException("ttl", "the TTL of lock '" + lockName + "' must be at most "
                    + LockObject.MAX_TTL.toDays() + " days, got " + ttl);
        }
        Duration refresh = defaultRefreshInterval(ttl);
        if (refresh.isZero()) {
            throw new GcsLockConfigurationException("ttl", "the TTL of lock '" + lockName + "' (" + ttl
                    + ") is too short to refresh the lock within it; use at least a few milliseconds (seconds on real GCS)");
        }
        // The registry's own bound (DESIGN.md rule 10): with N allowed failures, N refresh intervals must pass
        // well before the TTL, so that a holder that cannot refresh gives up before anyone may take over.
        if (refresh.multipliedBy(maxRefreshFailures).compareTo(ttl) >= 0) {
            throw new GcsLockConfigurationException("ttl", "the TTL of lock '" + lockName + "' (" + ttl + ") refreshes every "
                    + refresh + "; with maxRefreshFailures " + maxRefreshFailures + " the holder could not give up before its "
                    + "lock expires; use a registry with maxRefreshFailures below 8 or the registry's TTL");
        }
        Duration margin = defaultSafetyMargin(ttl, refresh);
        LeaseTiming timing = new LeaseTiming(ttl, refresh, margin);
        if (!writeRateWindow.isZero() && writeRateWindow.toNanos() >= timing.deadlineSpanNanos()) {
            // Rule 21: no refresh is sent within a write window of the create, so none could come before the deadline.
            throw new GcsLockConfigurationException("ttl", "the TTL of lock '" + lockName + "' (" + ttl + ") is too short "
                    + "for GCS's write limit: its deadline (" + Duration.ofNanos(timing.deadlineSpanNanos()) + " after a write) "
                    + "comes before the writeRateWindow (" + writeRateWindow + ") that must pass before the next write, so it "
                    + "could never be refreshed; use a TTL above " + writeRateWindow.multipliedBy(5).dividedBy(4)
                    + " (above " + writeRateWindow.multipliedBy(maxRefreshFailures).multipliedBy(5).dividedBy(4)
                    + " to allow maxRefreshFailures " + maxRefreshFailures + " refreshes)");
        }
        return timing;
    }
}
