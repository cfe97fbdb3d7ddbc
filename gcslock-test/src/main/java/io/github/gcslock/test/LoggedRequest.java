package io.github.gcslock.test;

import java.time.Instant;
import java.util.Map;

/**
 * One request as the emulator served it, recorded while {@link Faults#logRequests(boolean)} is on: for a test
 * that checks what a client spent on one object, and which of its writes met the write-rate limit.
 *
 * @param client the client the request came from (the name given to {@link GcsEmulator#endpoint(String)}), or
 *        {@code null} for the shared endpoint
 * @param operation what was asked
 * @param bucket the bucket, or {@code null}
 * @param object the object name (for an insert, the name its body gave), or {@code null} (a list, say)
 * @param receivedNanos {@link System#nanoTime()} when the request arrived
 * @param answeredNanos {@link System#nanoTime()} when its reply left (after a slow reply's delay), or when it was
 *        refused or lost
 * @param status the status answered (an injected failure's too), or {@code 0} when a partition refused it or held
 *        it and dropped it (nothing was processed)
 * @param replyLost whether the operation was processed but the client got no reply (a dropped reply, a partition
 *        that started mid-request)
 * @param writeRateLimited whether the write-rate limit ({@link GcsEmulator#writeRateLimit(java.time.Duration)})
 *        answered it with 429
 * @param previousWriter for a write the limit refused: the client of the write of the object it met, else {@code null}
 * @param previousWriteNanos for a write the limit refused: when that write committed ({@link System#nanoTime()}), else 0
 * @param metadata the object's custom metadata: as read, created or changed (a 2xx get, insert, patch or update),
 *        or as deleted (a 2xx delete); else empty
 * @param updated the object's {@code updated} as read, created or changed, or {@code null}
 */
public record LoggedRequest(String client, Operation operation, String bucket, String object, long receivedNanos,
                            long answeredNanos, int status, boolean replyLost, boolean writeRateLimited,
                            String previousWriter, long previousWriteNanos, Map<String, String> metadata,
                            Instant updated) {

    /** Whether the operation changes an object (insert, patch, update, delete, compose, rewrite). */
    public boolean isWrite() {
        return switch (operation) {
            case INSERT, UPLOAD, PATCH, UPDATE, DELETE, COMPOSE, REWRITE -> true;
            default -> false;
        };
    }
}
