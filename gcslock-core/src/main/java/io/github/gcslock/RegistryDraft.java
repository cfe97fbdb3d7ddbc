package io.github.gcslock;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * What a {@link GcsLockRegistry.Builder} has been told so far, with the defaults of the settings that
 * have a fixed one (a null duration: not set, derived by {@link LockSettings#validated()}). Nothing is
 * checked here: {@link LockSettings} validates and names the setting at fault (rule 19).
 */
final class RegistryDraft {
    final String bucket;
    String prefix = "gcslock/";
    Duration ttl = Duration.ofMinutes(5);
    Duration refreshInterval;
    int maxRefreshFailures = 3;
    Duration safetyMargin;
    Duration operationTimeout;
    Duration backoffInitial = Duration.ofSeconds(1);
    Duration backoffMax = Duration.ofSeconds(30);
    double backoffMultiplier = 2.0;
    Duration writeRateWindow = Duration.ofSeconds(1);
    int refresherThreads = 256;
    double refreshRateWarningShare = 0.5;
    Clock clock = Clock.systemUTC();
    LongSupplier nanoTime = System::nanoTime;
    String identity;
    String applicationName;
    boolean verifyBucket = true;
    /** Internal (tests): the engine's threads and timed waits; real ones unless an explorer substitutes its own. */
    EngineRuntime runtime = EngineRuntime.REAL;
    /**
     * Internal (tests): use the given {@code Storage} as it is, without a copy of its client with bounded retries
     * (an in-memory storage has no client options to copy; it bounds and fails its calls itself).
     */
    boolean storageAsGiven;
    final List<LockEventListener> listeners = new ArrayList<>();

    RegistryDraft(String bucket) {
        this.bucket = bucket;
    }

    /** The settings as given (not yet validated, defaults not yet derived). */
    LockSettings settings() {
        return new LockSettings(bucket, prefix, ttl, refreshInterval, maxRefreshFailures, safetyMargin,
                operationTimeout, backoffInitial, backoffMax, backoffMultiplier, writeRateWindow, refresherThreads,
                refreshRateWarningShare);
    }
}
