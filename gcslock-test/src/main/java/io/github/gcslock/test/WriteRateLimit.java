package io.github.gcslock.test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * GCS's limit of about one write per second to one object name (a setting of the emulator, see
 * {@link GcsEmulator#writeRateLimit(Duration)}): a write of a name within the minimum interval of the
 * last write of that name is answered with 429 {@code rateLimitExceeded}. The limit is per name, whatever
 * the generation: a re-create right after a delete counts. Called under the store's lock.
 */
final class WriteRateLimit {

    private final Supplier<Duration> minInterval;
    private final Runnable onLimited;
    private final Map<String, Instant> lastWrite = new ConcurrentHashMap<>();
    /** The client of the last write of each name and when it committed (System.nanoTime), for the request log. */
    private final Map<String, Writer> lastWriter = new ConcurrentHashMap<>();

    private record Writer(String client, long nanos) {
    }

    /** {@code minInterval} answers the current setting (null: off); {@code onLimited} counts each 429. */
    WriteRateLimit(Supplier<Duration> minInterval, Runnable onLimited) {
        this.minInterval = minInterval;
        this.onLimited = onLimited;
    }

    /** Throws the 429 when {@code bucket/name} was written less than the minimum interval before {@code now}. */
    void check(String bucket, String name, Instant now) {
        Duration interval = minInterval.get();
        if (interval == null) {
            return;
        }
        Instant last = lastWrite.get(bucket + "/" + name);
        if (last != null && Duration.between(last, now).compareTo(interval) < 0) {
            onLimited.run();
            RequestNotes notes = RequestNotes.current();
            Writer w = lastWriter.get(bucket + "/" + name);
            if (notes != null) {
                notes.writeRateLimited = true;
                notes.previousWriter = w == null ? null : w.client();
                notes.previousWriteNanos = w == null ? 0 : w.nanos();
            }
            throw new GcsError(429, "rateLimitExceeded",
                    "The object exceeded the rate limit for object mutation operations (create, update, and delete).");
        }
    }

    /** Records a write of {@code bucket/name} at {@code now}. */
    void wrote(String bucket, String name, Instant now) {
        lastWrite.put(bucket + "/" + name, now);
        lastWriter.put(bucket + "/" + name, new Writer(RequestNotes.client(), System.nanoTime()));
    }
}
