package io.github.gcslock;

import com.google.cloud.storage.Bucket;
import com.google.cloud.storage.StorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of the lock bucket (DESIGN.md rule 19): it must exist and must let lock objects be
 * deleted on release (no retention policy, no default event-based hold); versioning and soft delete are
 * harmless but cost storage, so they are reported. An identity that may not read bucket settings, or a
 * bucket that cannot be read now, only skips the check: locking itself reports errors per lock.
 */
final class BucketCheck {

    private static final Logger log = LoggerFactory.getLogger(BucketCheck.class);

    private BucketCheck() {
    }

    /**
     * Checks the bucket of {@code store}.
     *
     * @throws GcsLockException if the bucket does not exist or cannot hold locks
     */
    static void check(LockStore store) {
        String bucket = store.bucket();
        Bucket b;
        try {
            b = store.readBucket();
        } catch (StorageException e) {
            if (LockStore.isPermissionDenied(e)) {
                log.info("gcslock: bucket check of '{}' skipped: the identity lacks storage.buckets.get ({})",
                        bucket, e.getMessage());
                return;
            }
            log.warn("gcslock: could not read bucket '{}' to check it ({}); locking will be tried anyway and "
                    + "will report errors per lock", bucket, e.getMessage());
            return;
        }
        if (b == null) {
            throw new GcsLockException(null, "bucket '" + bucket + "' does not exist; create it or set the bucket to an existing one");
        }
        if (b.getRetentionPeriodDuration() != null && !b.getRetentionPeriodDuration().isZero()) {
            throw new GcsLockException(null, "bucket '" + bucket + "' has a retention policy ("
                    + b.getRetentionPeriodDuration() + "): lock objects could not be deleted on release, so every "
                    + "lock would stay taken until its TTL; use a bucket without retention policy");
        }
        if (Boolean.TRUE.equals(b.getDefaultEventBasedHold())) {
            throw new GcsLockException(null, "bucket '" + bucket + "' places an event-based hold on new objects by "
                    + "default: lock objects could not be deleted on release; use a bucket without default event-based hold");
        }
        if (Boolean.TRUE.equals(b.versioningEnabled())) {
            log.info("gcslock: bucket '{}' has object versioning on: released lock objects are kept as noncurrent "
                    + "versions (harmless for locking, but they cost storage until a lifecycle rule deletes them)", bucket);
        }
        if (b.getSoftDeletePolicy() != null && b.getSoftDeletePolicy().getRetentionDuration() != null
                && !b.getSoftDeletePolicy().getRetentionDuration().isZero()) {
            log.info("gcslock: bucket '{}' has soft delete ({}): released lock objects are kept that long "
                    + "(harmless for locking; consider disabling soft delete on a lock bucket)", bucket,
                    b.getSoftDeletePolicy().getRetentionDuration());
        }
    }
}
