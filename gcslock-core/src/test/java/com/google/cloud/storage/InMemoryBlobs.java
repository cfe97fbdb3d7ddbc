package com.google.cloud.storage;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;

/**
 * Test helper (gcslock-core tests only): builds the client's {@link Blob} for an in-memory storage. It sits in the
 * client's package because {@code Blob}'s constructor and the setters of server-set fields (metageneration, create
 * and update times) are package-private.
 */
public final class InMemoryBlobs {

    private InMemoryBlobs() {
    }

    public static Blob blob(Storage storage, String bucket, String name, long generation, long metageneration,
                            Instant created, Instant updated, Map<String, String> metadata) {
        return BlobInfo.newBuilder(bucket, name, generation)
                .setMetageneration(metageneration)
                .setCreateTimeOffsetDateTime(OffsetDateTime.ofInstant(created, ZoneOffset.UTC))
                .setUpdateTimeOffsetDateTime(OffsetDateTime.ofInstant(updated, ZoneOffset.UTC))
                .setMetadata(metadata.isEmpty() ? null : metadata)
                .setSize(0L)
                .build()
                .asBlob(storage);
    }
}
