package io.github.gcslock.benchmarks;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;

import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A lock following the design of ShedLock's GCS provider, written here from its description (not its
 * code): lock = GET, then create or re-create the object with {@code ifGenerationMatch} when it is
 * absent or its {@code lockUntil} (metadata, judged by the local clock) has passed; identity = host
 * name; unlock = rewrite {@code lockUntil} to now; no refresh.
 */
final class ShedLockStyleGcsLock implements BaselineLock {

    private final Storage storage;
    private final String bucket;
    private final Duration lockAtMostFor;
    private final String host;
    private volatile long heldGeneration;

    ShedLockStyleGcsLock(Storage storage, String bucket, Duration lockAtMostFor) {
        this.storage = storage;
        this.bucket = bucket;
        this.lockAtMostFor = lockAtMostFor;
        String h;
        try {
            h = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            h = "unknown";
        }
        this.host = h;
    }

    private BlobInfo info(String name, Instant until) {
        return BlobInfo.newBuilder(BlobId.of(bucket, "shedlock/" + name))
                .setMetadata(Map.of("lockUntil", until.toString(), "lockedBy", host)).build();
    }

    @Override
    public boolean tryLock(String name) {
        try {
            Blob current = storage.get(BlobId.of(bucket, "shedlock/" + name));
            Instant now = Instant.now();
            long expected;
            if (current == null) {
                expected = 0;
            } else if (Instant.parse(current.getMetadata().get("lockUntil")).isAfter(now)) {
                return false;
            } else {
                expected = current.getGeneration();
            }
            Blob created = storage.create(info(name, now.plus(lockAtMostFor)), new byte[0],
                    Storage.BlobTargetOption.generationMatch(expected));
            heldGeneration = created.getGeneration();
            return true;
        } catch (StorageException e) {
            if (e.getCode() == 412 || e.getCode() == 429 || e.getCode() >= 500) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public void unlock(String name) {
        try {
            storage.create(info(name, Instant.now()), new byte[0], Storage.BlobTargetOption.generationMatch(heldGeneration));
        } catch (StorageException e) {
            if (e.getCode() != 412) {
                throw e;
            }
        }
    }
}
