package io.github.gcslock.test;

import com.google.api.gax.paging.Page;
import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Bucket;
import com.google.cloud.storage.BucketInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import org.junit.jupiter.api.Test;

import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Pins each emulator semantic that locks depend on, through the real google-cloud-storage client. */
class GcsEmulatorTest extends EmulatorTestBase {

    @Override
    RetrySettings retrySettings() {
        return quickRetries(Duration.ofSeconds(5));
    }

    private static BlobInfo info(String name, Map<String, String> metadata) {
        return BlobInfo.newBuilder(BUCKET, name).setCacheControl("no-store").setMetadata(metadata).build();
    }

    @Test
    void createWithDoesNotExistThenGetReturnsMetadataAndGenerations() {
        Blob created = storage.create(info("gcslock/x", Map.of("k", "v")), new byte[0], Storage.BlobTargetOption.doesNotExist());
        assertThat(created.getGeneration()).isPositive();
        assertThat(created.getMetageneration()).isEqualTo(1L);
        assertThat(created.getCacheControl()).isEqualTo("no-store");
        assertThat(created.getUpdateTimeOffsetDateTime()).isNotNull();

        Blob got = storage.get(BlobId.of(BUCKET, "gcslock/x"));
        assertThat(got.getMetadata()).containsEntry("k", "v");
        assertThat(got.getGeneration()).isEqualTo(created.getGeneration());
        assertThat(got.getSize()).isZero();
    }

    @Test
    void secondCreateWithDoesNotExistFailsWith412ConditionNotMet() {
        storage.create(info("n", Map.of()), new byte[0], Storage.BlobTargetOption.doesNotExist());
        assertThatThrownBy(() -> storage.create(info("n", Map.of()), new byte[0], Storage.BlobTargetOption.doesNotExist()))
                .isInstanceOfSatisfying(StorageException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(412);
                    assertThat(e.getReason()).isEqualTo("conditionNotMet");
                    assertThat(e.isRetryable()).isFalse();
                });
    }

    @Test
    void generationGrowsForEveryNewObjectOfOneNameEvenWhenTheClockGoesBack() {
        long g1 = storage.create(info("n", Map.of()), new byte[0]).getGeneration();
        storage.delete(BlobId.of(BUCKET, "n"));
        gcs.clockOffset(Duration.ofMinutes(-5));
        long g2 = storage.create(info("n", Map.of()), new byte[0]).getGeneration();
        long g3 = storage.create(info("n", Map.of()), "x".getBytes(StandardCharsets.UTF_8)).getGeneration();
        assertThat(g2).isGreaterThan(g1);
        assertThat(g3).isGreaterThan(g2);
    }

    @Test
    void patchMergesMetadataPerKeyBumpsMetagenerationAndUpdatedKeepsGeneration() throws Exception {
        Blob b = storage.create(info("n", Map.of("a", "1", "b", "2")), new byte[0]);
        Thread.sleep(5);
        Map<String, String> change = new HashMap<>();
        change.put("a", "10");
        change.put("b", null);
        change.put("c", "3");
        Blob p = storage.update(BlobInfo.newBuilder(b.getBlobId()).setMetadata(change).build(),
                Storage.BlobTargetOption.metagenerationMatch(1));
        assertThat(p.getMetadata()).containsEntry("a", "10").containsEntry("c", "3").doesNotContainKey("b");
        assertThat(p.getMetageneration()).isEqualTo(2L);
        assertThat(p.getGeneration()).isEqualTo(b.getGeneration());
        assertThat(p.getUpdateTimeOffsetDateTime()).isAfter(b.getUpdateTimeOffsetDateTime());
        assertThat(p.getCacheControl()).isEqualTo("no-store");
    }

    @Test
    void preconditionsOnPatchDeleteAndGet() {
        Blob b = storage.create(info("n", Map.of()), new byte[0]);
        BlobInfo change = BlobInfo.newBuilder(b.getBlobId()).setMetadata(Map.of("x", "y")).build();
        assertThatThrownBy(() -> storage.update(change, Storage.BlobTargetOption.metagenerationMatch(7)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThatThrownBy(() -> storage.update(change, Storage.BlobTargetOption.metagenerationNotMatch(1)))
                .isInstanceOf(StorageException.class);
        assertThatThrownBy(() -> storage.delete(BlobId.of(BUCKET, "n"), Storage.BlobSourceOption.metagenerationMatch(2)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThatThrownBy(() -> storage.delete(BlobId.of(BUCKET, "n"), Storage.BlobSourceOption.generationMatch(b.getGeneration() + 1)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThatThrownBy(() -> storage.get(BlobId.of(BUCKET, "n"), Storage.BlobGetOption.metagenerationMatch(3)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThatThrownBy(() -> storage.create(info("other", Map.of()), new byte[0], Storage.BlobTargetOption.generationMatch(5)))
                .as("ifGenerationMatch=5 on an absent object")
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
    }

    @Test
    void deleteWithMatchingPreconditionThenGetIsNullAndDeleteAgainIsFalse() {
        Blob b = storage.create(info("n", Map.of()), new byte[0]);
        assertThat(storage.delete(BlobId.of(BUCKET, "n"), Storage.BlobSourceOption.metagenerationMatch(b.getMetageneration()))).isTrue();
        assertThat(storage.get(BlobId.of(BUCKET, "n"))).isNull();
        assertThat(storage.delete(BlobId.of(BUCKET, "n"))).isFalse();
    }

    @Test
    void listWithPrefixPagesThroughNamesInOrder() {
        for (int i = 0; i < 5; i++) {
            storage.create(info("gcslock/n" + i, Map.of()), new byte[0]);
        }
        storage.create(info("other/x", Map.of()), new byte[0]);
        Page<Blob> page = storage.list(BUCKET, Storage.BlobListOption.prefix("gcslock/"), Storage.BlobListOption.pageSize(2));
        List<String> names = new ArrayList<>();
        page.iterateAll().forEach(b -> names.add(b.getName()));
        assertThat(names).containsExactly("gcslock/n0", "gcslock/n1", "gcslock/n2", "gcslock/n3", "gcslock/n4");
    }

    @Test
    void bucketGetAndCreateKeepSettings() {
        gcs.createBucket(BucketInfo.newBuilder("retained").setRetentionPeriodDuration(Duration.ofDays(1))
                .setDefaultEventBasedHold(true).setVersioningEnabled(true).build());
        Bucket b = storage.get("retained");
        assertThat(b.getRetentionPeriodDuration()).isEqualTo(Duration.ofDays(1));
        assertThat(b.getDefaultEventBasedHold()).isTrue();
        assertThat(b.versioningEnabled()).isTrue();
        assertThat(storage.get("missing")).isNull();
        assertThatThrownBy(() -> storage.create(BucketInfo.of("retained")))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    }

    @Test
    void bucketListNamesEveryBucketAndHonoursThePrefix() {
        gcs.createBucket("my-app-locks");
        List<String> names = new ArrayList<>();
        storage.list().iterateAll().forEach(b -> names.add(b.getName()));
        assertThat(names).containsExactly(BUCKET, "my-app-locks");
        List<String> prefixed = new ArrayList<>();
        storage.list(Storage.BucketListOption.prefix("my-")).iterateAll().forEach(b -> prefixed.add(b.getName()));
        assertThat(prefixed).containsExactly("my-app-locks");
    }

    @Test
    void createInMissingBucketIs404() {
        assertThatThrownBy(() -> storage.create(BlobInfo.newBuilder("nope", "n").build(), new byte[0]))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(404));
    }

    @Test
    void injectedFailuresReachTheClientWithTheirCode() {
        gcs.faults().failNext(3, 503, Operation.GET);
        assertThatThrownBy(() -> storage.get(BlobId.of(BUCKET, "n")))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(503));
        assertThat(gcs.faults().requestCount(Operation.GET)).as("client retried 3 times").isEqualTo(3);

        gcs.faults().failNext(1, 403);
        assertThatThrownBy(() -> storage.get(BlobId.of(BUCKET, "n")))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(403));
        gcs.faults().failNext(1, 409);
        assertThatThrownBy(() -> storage.get(BlobId.of(BUCKET, "n")))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    }

    @Test
    void lostCreateReplyIsCommittedAndTheClientsRetrySees412() {
        gcs.faults().dropNextReply(Operation.INSERT);
        assertThatThrownBy(() -> storage.create(info("n", Map.of("owner", "me")), new byte[0], Storage.BlobTargetOption.doesNotExist()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThat(gcs.faults().requestCount(Operation.INSERT)).isEqualTo(2);
        assertThat(storage.get(BlobId.of(BUCKET, "n")).getMetadata()).containsEntry("owner", "me");
    }

    @Test
    void lostPatchReplyIsCommittedAndTheRetrySees412() {
        Blob b = storage.create(info("n", Map.of()), new byte[0]);
        gcs.faults().dropNextReply(Operation.PATCH);
        assertThatThrownBy(() -> storage.update(BlobInfo.newBuilder(b.getBlobId()).setMetadata(Map.of("x", "1")).build(),
                Storage.BlobTargetOption.metagenerationMatch(1)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThat(storage.get(BlobId.of(BUCKET, "n")).getMetageneration()).isEqualTo(2L);
    }

    @Test
    void writeRateLimitAnswers429ForASecondWriteOfOneObject() {
        gcs.writeRateLimit(Duration.ofMinutes(1));
        Storage noRetry = gcs.storage(RetrySettings.newBuilder().setMaxAttempts(1).build());
        Blob b = noRetry.create(info("n", Map.of()), new byte[0]);
        assertThatThrownBy(() -> noRetry.update(BlobInfo.newBuilder(b.getBlobId()).setMetadata(Map.of("x", "1")).build()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(429));
        noRetry.create(info("other", Map.of()), new byte[0]); // another object is not limited
        gcs.writeRateLimit(false);
        noRetry.update(BlobInfo.newBuilder(b.getBlobId()).setMetadata(Map.of("x", "1")).build());
    }

    @Test
    void clockOffsetMovesUpdated() {
        gcs.clockOffset(Duration.ofMinutes(2));
        Blob b = storage.create(info("n", Map.of()), new byte[0]);
        Instant updated = b.getUpdateTimeOffsetDateTime().toInstant();
        assertThat(Duration.between(Instant.now(), updated).toMillis()).isCloseTo(120_000L, within(5_000L));
    }

    /** The write-rate limit and the clock offset are settings of the emulator: resetting the faults keeps them. */
    @Test
    void resettingFaultsKeepsTheWriteRateLimitAndTheClockOffset() {
        gcs.writeRateLimit(Duration.ofMinutes(1)).clockOffset(Duration.ofMinutes(2));
        gcs.faults().reset();
        Storage noRetry = gcs.storage(RetrySettings.newBuilder().setMaxAttempts(1).build());
        Blob b = noRetry.create(info("n", Map.of()), new byte[0]);
        assertThat(Duration.between(Instant.now(), b.getUpdateTimeOffsetDateTime().toInstant()).toMillis())
                .isCloseTo(120_000L, within(5_000L));
        assertThatThrownBy(() -> noRetry.update(BlobInfo.newBuilder(b.getBlobId()).setMetadata(Map.of("x", "1")).build()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(429));
        assertThat(gcs.faults().rateLimited()).isEqualTo(1);
    }

    @Test
    void latencyDelaysRequests() {
        gcs.faults().latency(Duration.ofMillis(100), Duration.ofMillis(100));
        long t0 = System.nanoTime();
        storage.get(BlobId.of(BUCKET, "n"));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(100));
    }

    @Test
    void beforeNextRunsInsideTheRequestWindow() {
        Blob b = storage.create(info("n", Map.of()), new byte[0]);
        gcs.faults().beforeNext(Operation.DELETE, () -> storage.update(
                BlobInfo.newBuilder(b.getBlobId()).setMetadata(Map.of("x", "1")).build()));
        assertThatThrownBy(() -> storage.delete(b.getBlobId(), Storage.BlobSourceOption.metagenerationMatch(1)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
    }

    @Test
    void concurrentCreatesOfOneNameHaveExactlyOneWinner() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            for (int round = 0; round < 10; round++) {
                String name = "race-" + round;
                List<Callable<Boolean>> tasks = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    tasks.add(() -> {
                        try {
                            storage.create(info(name, Map.of()), new byte[0], Storage.BlobTargetOption.doesNotExist());
                            return true;
                        } catch (StorageException e) {
                            assertThat(e.getCode()).isEqualTo(412);
                            return false;
                        }
                    });
                }
                int winners = 0;
                for (Future<Boolean> f : pool.invokeAll(tasks)) {
                    winners += f.get() ? 1 : 0;
                }
                assertThat(winners).isEqualTo(1);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void mediaDownloadReturnsContent() {
        storage.create(info("n", Map.of()), "hello".getBytes(StandardCharsets.UTF_8));
        assertThat(new String(storage.readAllBytes(BlobId.of(BUCKET, "n")), StandardCharsets.UTF_8)).isEqualTo("hello");
    }

    @Test
    void mediaUploadOverRawHttpCreatesTheObjectAndHonoursPreconditions() throws Exception {
        URL url = URI.create(gcs.endpoint()
                + "/upload/storage/v1/b/" + BUCKET + "/o?uploadType=media&name=raw%2Fobj&ifGenerationMatch=0").toURL();
        for (int expected : new int[]{200, 412}) {
            HttpURLConnection c = (HttpURLConnection) url.openConnection();
            c.setRequestMethod("POST");
            c.setDoOutput(true);
            c.setRequestProperty("Content-Type", "text/plain");
            c.getOutputStream().write("media".getBytes(StandardCharsets.UTF_8));
            assertThat(c.getResponseCode()).isEqualTo(expected);
        }
        Blob b = storage.get(BlobId.of(BUCKET, "raw/obj"));
        assertThat(b.getContentType()).isEqualTo("text/plain");
        assertThat(new String(storage.readAllBytes(b.getBlobId()), StandardCharsets.UTF_8)).isEqualTo("media");
    }

    @Test
    void countersCountPerOperation() {
        gcs.faults().resetCounters();
        storage.create(info("n", Map.of()), new byte[0]);
        storage.get(BlobId.of(BUCKET, "n"));
        storage.delete(BlobId.of(BUCKET, "n"));
        assertThat(gcs.faults().requestCounts()).containsEntry(Operation.INSERT, 1L).containsEntry(Operation.GET, 1L)
                .containsEntry(Operation.DELETE, 1L);
        assertThat(gcs.faults().objectRequests()).isEqualTo(3);
    }
}
