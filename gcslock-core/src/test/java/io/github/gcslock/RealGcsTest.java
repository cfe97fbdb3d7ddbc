package io.github.gcslock;

import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine against a real bucket, opt-in: set {@code GCSLOCK_IT_BUCKET} (and Application Default
 * Credentials, e.g. {@code gcloud auth application-default login}). Skipped, saying so, otherwise.
 * Uses TTLs of seconds because GCS allows about one write per second per object.
 */
class RealGcsTest {

    private final String bucket = System.getenv("GCSLOCK_IT_BUCKET");
    private final String prefix = "gcslock-it/" + UUID.randomUUID() + "/";
    private final List<GcsLockRegistry> registries = new ArrayList<>();
    private Storage storage;

    @BeforeEach
    void requireBucket() {
        Assumptions.assumeTrue(bucket != null && !bucket.isBlank(),
                "real-GCS tests skipped: set GCSLOCK_IT_BUCKET to a bucket this identity may write, to run them");
        storage = StorageOptions.getDefaultInstance().getService();
    }

    @AfterEach
    void close() {
        registries.forEach(GcsLockRegistry::close);
    }

    private GcsLockRegistry registry(Duration ttl) {
        GcsLockRegistry r = GcsLockRegistry.builder(storage, bucket).prefix(prefix).ttl(ttl)
                .refreshInterval(ttl.dividedBy(5)).backoff(Duration.ofMillis(200), Duration.ofSeconds(2), 2).build();
        registries.add(r);
        return r;
    }

    @Test
    void acquireReleaseAndExclusion() throws Exception {
        GcsLockRegistry a = registry(Duration.ofSeconds(20));
        GcsLockRegistry b = registry(Duration.ofSeconds(20));
        Lease lease = a.acquire("job", Duration.ZERO);
        assertThat(b.tryAcquire("job")).isEmpty();
        assertThat(b.inspect("job").orElseThrow().owner()).isEqualTo(a.owner());
        lease.release();
        Thread.sleep(1100); // one write per second per object
        assertThat(b.acquire("job", Duration.ofSeconds(10)).fencingToken()).isGreaterThan(lease.fencingToken());
    }

    @Test
    void refreshKeepsTheLeaseAndStaleLocksAreTakenOver() throws Exception {
        GcsLockRegistry a = registry(Duration.ofSeconds(10));
        Lease lease = a.acquire("refreshed", Duration.ZERO);
        long meta = a.inspect("refreshed").orElseThrow().metageneration();
        await("the lease to be refreshed on real GCS")
                .atMost(Duration.ofSeconds(60)).until(() -> a.inspect("refreshed").orElseThrow().metageneration() > meta);
        assertThat(lease.isHealthy()).isTrue();
        lease.release();
    }
}
