package io.github.gcslock.benchmarks;

import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;

/**
 * The common gcslock-style design (seeds 001, 003): take = create with {@code ifGenerationMatch=0},
 * release = delete, no refresh, no owner check; waiters back off exponentially without cap or jitter.
 */
final class NaiveGcsLock implements BaselineLock {

    private final Storage storage;
    private final String bucket;

    NaiveGcsLock(Storage storage, String bucket) {
        this.storage = storage;
        this.bucket = bucket;
    }

    @Override
    public boolean tryLock(String name) {
        try {
            storage.create(BlobInfo.newBuilder(bucket, "naive/" + name).build(), new byte[0],
                    Storage.BlobTargetOption.doesNotExist());
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
        // An unconditional DELETE is not retried by the client; retry 429s here or the lock would stick.
        while (true) {
            try {
                storage.delete(BlobId.of(bucket, "naive/" + name));
                return;
            } catch (StorageException e) {
                if (e.getCode() != 429 && e.getCode() < 500) {
                    throw e;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Its waiting: exponential, no cap, no jitter. */
    static long backoffMillis(long initialMillis, int attempt) {
        return initialMillis << Math.min(attempt, 20);
    }
}
