package io.github.gcslock;

import com.google.cloud.storage.BlobId;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule 16: a takeover DELETE that finds the stale object already gone (404: deleted by another contender or its late
 * holder between our GET and our DELETE) found the name free: the next request is the create, not a read. Only a
 * refused DELETE (412: the object changed) is followed by a read. Found by an independent review of 19e94d4, which
 * read after both.
 */
class TakeoverDeleteFindsNoObjectTest extends EmulatorTestBase {

    @Test
    void aTakeoverDeleteThatFindsTheObjectGoneCreatesWithoutAnotherRead() {
        GcsLockRegistry r = registry();
        plantForeignLock("job", Duration.ofMillis(300));
        assertThat(r.tryAcquire("job")).isEmpty(); // first sight: not yet provably stale
        sleep(450);
        gcs.faults().beforeNext(Operation.DELETE, () -> {
            storage.delete(BlobId.of(BUCKET, "gcslock/job")); // gone before our takeover DELETE is processed
            sleep(200); // past the emulator's (scaled) write window, so that our DELETE meets 404, not 429
        });
        gcs.faults().resetCounters();
        Optional<Lease> got = r.tryAcquire("job");
        assertThat(got).as("the name was free").isPresent();
        long deletes = gcs.faults().requestCount(Operation.DELETE); // ours and the test's
        // the look; then, after the DELETE that found nothing, a create (no read: a 404 says the name is free)
        assertThat(reads()).as("reads (DELETEs %d, creates %d)", deletes, inserts()).isEqualTo(1);
        assertThat(inserts()).as("creates").isEqualTo(1);
        got.get().release();
    }
}
