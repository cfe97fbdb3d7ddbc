package io.github.gcslock;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Capped exponential backoff with full jitter. The cap keeps a waiter from sleeping for hours after
 * a long-held lock is freed; the jitter keeps contenders that started together from retrying
 * together (DESIGN.md rule 16: waiting).
 */
record Backoff(Duration initial, Duration max, double multiplier) {

    /**
     * The sleep before retry number {@code attempt} (0-based): uniform in [0, min(max, initial * multiplier^attempt)],
     * drawn from {@code random} (the engine runtime's: see {@link EngineRuntime#random()}).
     */
    Duration delay(int attempt, RandomGenerator random) {
        double ceiling = initial.toNanos() * Math.pow(multiplier, Math.min(attempt, 64));
        long cap = (long) Math.min(max.toNanos(), ceiling);
        return Duration.ofNanos(random.nextLong(cap + 1));
    }
}
