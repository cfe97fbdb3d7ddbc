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
        return derive(lockName, ttl, maxRefreshFailures, Duration.ZERO, Duration.ofDays(1));
    }

    /**
     * How long one GCS call for a lease of {@code ttl} may take (rule 15): TTL/3 (at least 1 ms), at most the
     * registry's {@code operationTimeout}.
     */
    static Duration callBound(Duration ttl, Duration operationTimeout) {
        Duration third = Duration.ofMillis(Math.max(1, ttl.toMillis() / 3));
        return third.compareTo(operationTimeout) < 0 ? third : operationTimeout;
    }

    /**
     * As {@link #derive(String, Duration, int)}, and refused when a healthy lease of this TTL could not keep itself
     * under GCS's write limit (rule 21): the create's reply (taking up to half a call bound, rule 15), then a write
     * window, then the first refresh's whole call bound must all fit before the lease's deadline (rule 11) --
     * {@code writeRateWindow + 1.5 x callBound < ttl - safetyMargin}. Otherwise, even with replies that quick, the
     * first refresh is either sent inside the window (a 429) or confirmed after the deadline (lost without a fault).
     *
     * @throws GcsLockConfigurationException (setting {@code ttl}) naming the lock, the rule broken and the smallest TTL
     */
    static LeaseTiming derive(String lockName, Duration ttl, int maxRefreshFailures, Duration writeRateWindow,
            Duration operationTimeout) {
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
        if (!writeRateWindow.isZero() && !keepsUnderTheWriteWindow(timing, writeRateWindow, operationTimeout)) {
            Duration smallest = smallestTtlUnderTheWriteWindow(ttl, writeRateWindow, operationTimeout);
            Duration bound = callBound(ttl, operationTimeout);
            throw new GcsLockConfigurationException("ttl", "the TTL of lock '" + lockName + "' (" + ttl + ") is too short "
                    + "for GCS's write limit: its deadline (" + Duration.ofNanos(timing.deadlineSpanNanos()) + " after a write) "
                    + "must leave room for the create's reply (half a call bound, " + bound.dividedBy(2) + "), the writeRateWindow ("
                    + writeRateWindow + ") that must pass before the next write, and the first refresh's call (up to " + bound
                    + "), or it could not be refreshed in time; use a TTL of at least " + smallest);
        }
        return timing;
    }

    /** Rule 21's per-lease check: window + 1.5 call bounds before the deadline (see {@link #derive}). */
    private static boolean keepsUnderTheWriteWindow(LeaseTiming timing, Duration window, Duration operationTimeout) {
        long needed = window.plus(callBound(timing.ttl(), operationTimeout).multipliedBy(3).dividedBy(2)).toNanos();
        return needed < timing.deadlineSpanNanos();
    }

    /** The smallest TTL (in steps of a hundredth of the window, at least 1 ms) that passes the per-lease check. */
    private static Duration smallestTtlUnderTheWriteWindow(Duration ttl, Duration window, Duration operationTimeout) {
        Duration found = smallestTtlAbove(ttl, window, 1_000_000, t -> {
            Duration refresh = defaultRefreshInterval(t);
            return !refresh.isZero() && keepsUnderTheWriteWindow(new LeaseTiming(t, refresh, defaultSafetyMargin(t, refresh)),
                    window, operationTimeout);
        });
        return found != null ? found : ttl;
    }

    /**
     * The smallest TTL above {@code ttl}, in steps of a hundredth of the write window (at least 1 ms), that
     * {@code passes}; null if none within {@code maxSteps} steps. Both TTL checks of rule 21 (the registry's and a
     * lease's own) name the TTL that would pass in their error.
     */
    static Duration smallestTtlAbove(Duration ttl, Duration window, int maxSteps, java.util.function.Predicate<Duration> passes) {
        Duration step = window.dividedBy(100);
        if (step.compareTo(Duration.ofMillis(1)) < 0) {
            step = Duration.ofMillis(1);
        }
        Duration t = ttl;
        for (int i = 0; i < maxSteps; i++) {
            t = t.plus(step);
            if (passes.test(t)) {
                return t;
            }
        }
        return null;
    }
}
