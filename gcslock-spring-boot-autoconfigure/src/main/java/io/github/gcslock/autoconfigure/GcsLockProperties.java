package io.github.gcslock.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.bind.Name;

import java.time.Duration;

/**
 * Settings of gcslock, bound to {@code gcslock.*}.
 *
 * @param enabled            whether to create the lock registry and the @GcsLocked support
 * @param bucket             the GCS bucket that holds the lock objects (required)
 * @param prefix             object name prefix of lock objects
 * @param ttl                how long a lock survives its holder's silence before others may take it over; at least 1s
 * @param refreshInterval    time between refreshes of a held lock; times max-refresh-failures must stay below ttl; default ttl/8 floored to whole seconds (37s for the 5m default)
 * @param maxRefreshFailures consecutive failed refreshes after which a lease is declared lost
 * @param safetyMargin       a lease with no confirmed refresh for (ttl - safety-margin) is declared lost; default min(ttl/5, (ttl - refresh-interval)/2)
 * @param operationTimeout   upper bound of one GCS call including the client's own retries; default min(10s, ttl/3)
 * @param identity           label written into lock objects to name this instance; default application@host:pid
 * @param defaultWait        default maximum wait of @GcsLocked methods (property gcslock.wait)
 * @param verifyBucket       whether to read the bucket at start-up and refuse one that cannot hold locks
 * @param writeRateWindow    how long GCS's per-object write limit lasts (about one write per second); after a 429 the engine waits this long once
 * @param refreshRateWarningShare share of a bucket's ~1,000 object writes/s at which this instance's own refresh writes log a WARN (0.5: 500/s, about 18,500 held locks at the default 37s interval); see README "Scale"
 * @param backoff            backoff between attempts while waiting for a lock
 * @param emulator           connection to a GCS emulator instead of real GCS
 * @param endpoint           the gcslocks Actuator endpoint
 */
@ConfigurationProperties("gcslock")
public record GcsLockProperties(
        @DefaultValue("true") boolean enabled,
        String bucket,
        @DefaultValue("gcslock/") String prefix,
        @DefaultValue("5m") Duration ttl,
        Duration refreshInterval,
        @DefaultValue("3") int maxRefreshFailures,
        Duration safetyMargin,
        Duration operationTimeout,
        String identity,
        @Name("wait") @DefaultValue("0s") Duration defaultWait,
        @DefaultValue("true") boolean verifyBucket,
        @DefaultValue("1s") Duration writeRateWindow,
        @DefaultValue("0.5") double refreshRateWarningShare,
        @DefaultValue Backoff backoff,
        @DefaultValue Emulator emulator,
        @DefaultValue Endpoint endpoint) {

    /**
     * Capped exponential backoff with full jitter.
     *
     * @param initial    ceiling of the first wait
     * @param max        cap of the wait ceiling
     * @param multiplier growth of the ceiling per attempt
     */
    public record Backoff(@DefaultValue("1s") Duration initial, @DefaultValue("30s") Duration max,
                          @DefaultValue("2.0") double multiplier) {
    }

    /**
     * A GCS emulator to use instead of real GCS (no credentials are needed then).
     *
     * @param endpoint base URL of a running emulator, e.g. http://127.0.0.1:4443
     * @param embedded start the in-process emulator of gcslock-test (must be on the class path); locks are then local to this process
     * @param projectId project id to present to the emulator
     */
    public record Emulator(String endpoint, @DefaultValue("false") boolean embedded,
                           @DefaultValue("gcslock-emulator") String projectId) {
    }

    /**
     * The gcslocks Actuator endpoint.
     *
     * @param forceReleaseEnabled whether DELETE /actuator/gcslocks/{name} may delete someone's lock object
     */
    public record Endpoint(@DefaultValue("false") boolean forceReleaseEnabled) {
    }
}
