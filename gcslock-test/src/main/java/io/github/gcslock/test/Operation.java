package io.github.gcslock.test;

/**
 * The GCS JSON-API operations the emulator understands. Used to count requests and to aim faults
 * at one kind of request.
 */
public enum Operation {
    /** {@code objects.insert}: multipart or media upload, or the start of a resumable upload. */
    INSERT,
    /** A request to a resumable upload session: a chunk (the last one creates the object), a status query, a cancel. */
    UPLOAD,
    /** {@code objects.get}: metadata (or media with {@code alt=media}). */
    GET,
    /** {@code objects.patch}: metadata merge (also sent as POST with {@code X-HTTP-Method-Override: PATCH}). */
    PATCH,
    /** {@code objects.update}: metadata replace (PUT). */
    UPDATE,
    /** {@code objects.delete}. */
    DELETE,
    /** {@code objects.compose}: a new object from up to 32 objects of the bucket. */
    COMPOSE,
    /** {@code objects.rewrite} and {@code objects.copy}: a new object with another object's content. */
    REWRITE,
    /** {@code objects.list}. */
    LIST,
    /** {@code buckets.get}. */
    BUCKET_GET,
    /** {@code buckets.list}: the emulator's buckets (all of them, in one page). */
    BUCKET_LIST,
    /** {@code buckets.insert}. */
    BUCKET_INSERT,
    /** {@code buckets.delete}. */
    BUCKET_DELETE,
    /** Anything else; answered with 501. */
    OTHER
}
