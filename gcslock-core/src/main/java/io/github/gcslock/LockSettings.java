package io.github.gcslock;

import java.time.Duration;
import java.util.Objects;

/**
 * The settings of a registry as given to its builder (a null duration: not set, use the default),
 * and, after {@link #validated()}, with every default derived and every combination checked
 * (DESIGN.md rule 19: bad input gets an error that names the setting at fault).
 */
record LockSettings(String bucket, String prefix, Duration ttl, Duration refreshInterval, int maxRefreshFailures,
        Duration safetyMargin, Duration operationTimeout, Duration backoffInitial, Duration backoffMax,
        double backoffMultiplier, Duration writeRateWindow, int refresherThreads, double refreshRateWarningShare) {

    /**
     * These settings with the defaults derived (refresh interval, safety margin, operation timeout),
     * checked.
     *
     * @throws GcsLockConfigurationException naming the setting at fault
     */
    LockSettings validated() {
        validate();
        return new LockSettings(bucket, prefix, ttl, effectiveRefreshInterval(), maxRefreshFailures,
                effectiveSafetyMargin(), effectiveOperationTimeout(), backoffInitial, backoffMax, backoffMultiplier,
                writeRateWindow, refresherThreads, refreshRateWarningShare);
    }

    Backoff backoff() {
        return new Backoff(backoffInitial, backoffMax, backoffMultiplier);
    }

    /** The refresh interval: as set, else TTL/8 floored to whole seconds (TTL/8 itself when under a second). */
    Duration effectiveRefreshInterval() {
        if (refreshInterval != null || ttl == null) {
            return refreshInterval;
        }
        return LeaseTiming.defaultRefreshInterval(ttl);
    }

    private Duration effectiveSafetyMargin() {
        if (safetyMargin != null) {
            return safetyMargin;
        }
        return LeaseTiming.defaultSafetyMargin(ttl, effectiveRefreshInterval());
    }

    private Duration effectiveOperationTimeout() {
        if (operationTimeout != null) {
            return operationTimeout;
        }
        Duration third = ttl.dividedBy(3);
        return third.compareTo(Duration.ofSeconds(10)) < 0 ? third : Duration.ofSeconds(10);
    }

    private void validate() {
        if (bucket == null || bucket.isBlank()) {
            throw new GcsLockConfigurationException("bucket", "bucket must be set to the GCS bucket that holds the lock objects");
        }
        if (prefix == null) {
            throw new GcsLockConfigurationException("prefix", "prefix must not be null (use \"\" for none)");
        }
        int bad = LockObject.forbiddenCharAt(prefix);
        if (bad >= 0) {
            throw new GcsLockConfigurationException("prefix", "prefix '" + LockObject.printable(prefix) + "' contains '"
                    + LockObject.printable(String.valueOf(prefix.charAt(bad))) + "'; control characters and # [ ] * ? are not allowed");
        }
        int lone = LockObject.unpairedSurrogateAt(prefix);
        if (lone >= 0) {
            throw new GcsLockConfigurationException("prefix", "prefix '" + LockObject.printable(LockObject.abbreviated(prefix))
                    + "' is not valid UTF-16: unpaired surrogate at index " + lone);
        }
        // Every lock's object name is prefix + name, at most 1024 bytes: a prefix must leave room for a name.
        int prefixBytes = LockObject.utf8Length(prefix);
        if (prefixBytes >= LockObject.MAX_OBJECT_NAME_BYTES) {
            throw new GcsLockConfigurationException("prefix", "prefix '" + LockObject.abbreviated(prefix) + "' is "
                    + prefixBytes + " bytes of UTF-8: GCS allows " + LockObject.MAX_OBJECT_NAME_BYTES
                    + " per object name, prefix and lock name together, so it leaves no room for a lock name");
        }
        positive("ttl", ttl);
        if (ttl.compareTo(LockObject.MAX_TTL) > 0) {
            throw new GcsLockConfigurationException("ttl", "ttl must be at most " + LockObject.MAX_TTL.toDays() + " days, got " + ttl);
        }
        Duration refreshInterval = effectiveRefreshInterval();
        positive("refreshInterval", refreshInterval);
        positive("backoff.initial", backoffInitial);
        positive("backoff.max", backoffMax);
        if (operationTimeout != null) {
            positive("operationTimeout", operationTimeout);
        }
        if (maxRefreshFailures < 1) {
            throw new GcsLockConfigurationException("maxRefreshFailures", "maxRefreshFailures must be at least 1, got " + maxRefreshFailures);
        }
        // Rule 10's bound: with N allowed failures, N refresh intervals must pass well before the TTL,
        // so that a holder that cannot refresh aborts before anyone may take over.
        if (refreshInterval.multipliedBy(maxRefreshFailures).compareTo(ttl) >= 0) {
            throw new GcsLockConfigurationException("refreshInterval", "refreshInterval (" + refreshInterval
                    + ") x maxRefreshFailures (" + maxRefreshFailures + ") must be below ttl (" + ttl
                    + "): a holder must give up before its lock expires; use refreshInterval < " + ttl.dividedBy(maxRefreshFailures));
        }
        if (backoffMax.compareTo(backoffInitial) < 0) {
            throw new GcsLockConfigurationException("backoff.max", "backoff.max (" + backoffMax
                    + ") must not be below backoff.initial (" + backoffInitial + ")");
        }
        if (!(backoffMultiplier >= 1.0) || Double.isInfinite(backoffMultiplier)) {
            throw new GcsLockConfigurationException("backoff.multiplier", "backoff.multiplier must be at least 1, got " + backoffMultiplier);
        }
        Duration margin = effectiveSafetyMargin();
        if (margin.isNegative() || ttl.minus(margin).compareTo(refreshInterval) <= 0) {
            throw new GcsLockConfigurationException("safetyMargin", "safetyMargin (" + margin
                    + ") must be at least 0 and leave more than one refreshInterval (" + refreshInterval + ") of the ttl (" + ttl + ")");
        }
        if (writeRateWindow == null || writeRateWindow.isNegative()) {
            throw new GcsLockConfigurationException("writeRateWindow", "writeRateWindow must not be negative, got " + writeRateWindow);
        }
        // Rule 21: refreshes of one object are at least writeRateWindow apart (GCS's one write per second), so
        // maxRefreshFailures of them (rule 10) must fit before the deadline, ttl - safetyMargin (rule 11).
        if (!writeWindowFits(ttl)) {
            Duration smallest = smallestTtlForTheWriteWindow();
            throw new GcsLockConfigurationException("ttl", "ttl (" + ttl + ") is too short for GCS's write limit: refreshes of "
                    + "one lock object are at least writeRateWindow (" + writeRateWindow + ") apart, so maxRefreshFailures ("
                    + maxRefreshFailures + ") of them take " + writeRateWindow.multipliedBy(maxRefreshFailures)
                    + ", not within the deadline ttl - safetyMargin (" + ttl.minus(margin) + "); use a ttl of at least "
                    + (smallest == null ? writeRateWindow.multipliedBy(maxRefreshFailures).plus(margin) : smallest)
                    + " (or fewer maxRefreshFailures)");
        }
        if (refresherThreads < 1) {
            throw new GcsLockConfigurationException("refresherThreads", "refresherThreads must be at least 1, got " + refresherThreads);
        }
        if (!(refreshRateWarningShare > 0) || Double.isInfinite(refreshRateWarningShare)) {
            throw new GcsLockConfigurationException("refreshRateWarningShare",
                    "refreshRateWarningShare must be a positive share of a bucket's ~1,000 writes/s (e.g. 0.5), got " + refreshRateWarningShare);
        }
    }

    /** Whether, with {@code ttl} and the other settings as given, maxRefreshFailures write windows fit before the deadline. */
    private boolean writeWindowFits(Duration ttl) {
        LockSettings s = withTtl(ttl);
        return writeRateWindow.multipliedBy(maxRefreshFailures).compareTo(ttl.minus(s.effectiveSafetyMargin())) < 0;
    }

    /**
     * The smallest TTL (in steps of a hundredth of the write window, at least 1 ms) with which the other settings
     * as given pass rule 21's check and rules 10's and 11's; null if none below 100,000 steps.
     */
    private Duration smallestTtlForTheWriteWindow() {
        return LeaseTiming.smallestTtlAbove(ttl, writeRateWindow, 100_000, t -> {
            LockSettings s = withTtl(t);
            Duration interval = s.effectiveRefreshInterval();
            Duration margin = s.effectiveSafetyMargin();
            return writeWindowFits(t) && interval.multipliedBy(maxRefreshFailures).compareTo(t) < 0
                    && !margin.isNegative() && t.minus(margin).compareTo(interval) > 0;
        });
    }

    private LockSettings withTtl(Duration t) {
        return new LockSettings(bucket, prefix, t, refreshInterval, maxRefreshFailures, safetyMargin, operationTimeout,
                backoffInitial, backoffMax, backoffMultiplier, writeRateWindow, refresherThreads, refreshRateWarningShare);
    }

    private static void positive(String setting, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new GcsLockConfigurationException(setting, setting + " must be a positive duration, got " + d);
        }
    }

    /** A duration given to a call (a wait, a delay): null or negative is refused, naming it. */
    static void requireNonNegative(String what, Duration d) {
        Objects.requireNonNull(d, what);
        if (d.isNegative()) {
            throw new GcsLockConfigurationException(what, what + " must not be negative, got " + d);
        }
    }
}
