package io.github.gcslock.test;

import java.time.Instant;

/**
 * The live generation of one object as the emulator stores it. Immutable: a metadata change stores a
 * new value with the next metageneration, so a reader holds a consistent snapshot outside the store's
 * lock. The content array is never written after creation.
 *
 * @param md5            base64 of the content's MD5, computed once; null for a composed object, which has
 *                       none on GCS
 * @param crc32c         base64 of the content's big-endian CRC32C, computed once
 * @param componentCount for a composed object, how many components; null otherwise
 */
record StoredObject(String bucket, String name, long generation, long metageneration, byte[] content, String md5,
                    String crc32c, Integer componentCount, Instant timeCreated, Instant updated, ObjectMetadata metadata) {

    /** A new object (metageneration 1) with {@code content}; {@code componentCount} is null unless composed. */
    static StoredObject create(String bucket, String name, long generation, byte[] content, Integer componentCount,
                               Instant now, ObjectMetadata metadata) {
        return new StoredObject(bucket, name, generation, 1, content, componentCount == null ? Hashes.md5(content) : null,
                Hashes.crc32c(content), componentCount, now, now, metadata);
    }

    /** This object with {@code newMetadata}: same generation and content, the next metageneration, updated now. */
    StoredObject withMetadata(ObjectMetadata newMetadata, Instant now) {
        return new StoredObject(bucket, name, generation, metageneration + 1, content, md5, crc32c, componentCount,
                timeCreated, now, newMetadata);
    }

    int size() {
        return content.length;
    }

    /** The content type, {@code application/octet-stream} when none was set (as on GCS). */
    String contentType() {
        return metadata.contentType() != null ? metadata.contentType() : "application/octet-stream";
    }
}
