package io.github.gcslock.test;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Faults of one client: a partition or slow replies hit that client's requests and nobody else's. */
class ClientFaultsTest extends EmulatorTestBase {

    private static final RetrySettings ONE_TRY = RetrySettings.newBuilder().setMaxAttempts(1).build();

    /** A named client without retries and with a read timeout, as a lock engine bounds its calls. */
    private Storage client(String name, Duration timeout) {
        int ms = (int) timeout.toMillis();
        return gcs.options(name).setRetrySettings(ONE_TRY)
                .setTransportOptions(HttpTransportOptions.newBuilder().setConnectTimeout(ms).setReadTimeout(ms).build())
                .build().getService();
    }

    private static BlobInfo object(String name) {
        return BlobInfo.newBuilder(BUCKET, name).build();
    }

    @Test
    void aFailPartitionRefusesThatClientOnlyAndProcessesNothing() {
        Storage a = client("a", Duration.ofSeconds(2));
        Storage b = client("b", Duration.ofSeconds(2));
        gcs.faults().client("a").partition(ClientFaults.Partition.FAIL);
        assertThatThrownBy(() -> a.create(object("x"), new byte[0])).isInstanceOf(StorageException.class);
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "x"))).as("not processed").isNull();
        b.create(object("y"), new byte[0]);
        // A client derived from a named one (as a lock engine derives its bounded client) keeps the name.
        Storage derived = a.getOptions().toBuilder().build().getService();
        assertThatThrownBy(() -> derived.get(BlobId.of(BUCKET, "y"))).isInstanceOf(StorageException.class);
        assertThat(gcs.faults().client("a").partitionedRequests()).isGreaterThanOrEqualTo(2);
        gcs.faults().client("a").heal();
        assertThat(a.get(BlobId.of(BUCKET, "y"))).isNotNull();
    }

    @Test
    void aHangPartitionHoldsRequestsPastTheClientsTimeoutAndDropsThemOnHeal() throws Exception {
        Storage a = client("a", Duration.ofMillis(300));
        gcs.faults().client("a").partition(ClientFaults.Partition.HANG);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> a.create(object("x"), new byte[0])).isInstanceOf(StorageException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
        gcs.faults().client("a").heal();
        Thread.sleep(100);
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "x"))).as("a hung request is lost, not processed").isNull();
    }

    @Test
    void aDelayPartitionProcessesHeldRequestsWhenItHeals() throws Exception {
        Storage a = client("a", Duration.ofSeconds(5));
        gcs.faults().client("a").partition(ClientFaults.Partition.DELAY);
        CompletableFuture<Object> created = CompletableFuture.supplyAsync(() -> a.create(object("x"), new byte[0]));
        Thread.sleep(300);
        assertThat(created).isNotDone();
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "x"))).isNull();
        gcs.faults().client("a").heal();
        created.get(5, TimeUnit.SECONDS);
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "x"))).as("delivered late, processed").isNotNull();
    }

    @Test
    void failNextAnswersThatClientsRequestsOfTheOperationOnlyAndProcessesNothing() {
        Storage a = client("a", Duration.ofSeconds(2));
        Storage b = client("b", Duration.ofSeconds(2));
        gcs.faults().client("a").failNext(1, 503, Operation.INSERT);
        assertThat(a.get(BlobId.of(BUCKET, "x"))).as("another operation is served").isNull();
        b.create(object("y"), new byte[0]);
        assertThat(gcs.faults().client("a").pendingFailures()).as("another client is served").isEqualTo(1);
        assertThatThrownBy(() -> a.create(object("x"), new byte[0])).isInstanceOf(StorageException.class)
                .satisfies(e -> assertThat(((StorageException) e).getCode()).isEqualTo(503));
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "x"))).as("not processed").isNull();
        assertThat(gcs.faults().client("a").pendingFailures()).isZero();
        a.create(object("x"), new byte[0]);
        gcs.faults().client("a").failNext(2, 503, Operation.INSERT).clearFailures();
        assertThat(gcs.faults().client("a").pendingFailures()).isZero();
        a.create(object("z"), new byte[0]);
    }

    @Test
    void aSlowReplyCommitsButArrivesAfterTheClientGaveUp() {
        Storage a = client("a", Duration.ofMillis(200));
        gcs.faults().client("a").slowReplies(1, Duration.ofMillis(600));
        assertThatThrownBy(() -> a.create(object("x"), new byte[0], Storage.BlobTargetOption.doesNotExist()))
                .isInstanceOf(StorageException.class);
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "x"))).as("committed").isNotNull();
        assertThat(gcs.faults().client("a").slowedReplies()).isEqualTo(1);
        // Only the next one was slow.
        a.create(object("y"), new byte[0]);
    }

    @Test
    void resetOfTheEmulatorsFaultsHealsEveryClient() {
        Storage a = client("a", Duration.ofSeconds(2));
        gcs.faults().client("a").partition(ClientFaults.Partition.FAIL);
        gcs.faults().reset();
        assertThat(gcs.faults().client("a").isPartitioned()).isFalse();
        a.create(object("x"), new byte[0]);
    }

    @Test
    void aPartitionMidRequestCommitsThatRequestLosesItsReplyAndRefusesTheNext() {
        Storage a = client("a", Duration.ofSeconds(2));
        gcs.faults().client("a").partitionAfterNextRequest(ClientFaults.Partition.FAIL);
        assertThatThrownBy(() -> a.create(object("x"), new byte[0])).isInstanceOf(StorageException.class);
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "x"))).as("committed").isNotNull();
        assertThat(gcs.faults().client("a").isPartitioned()).isTrue();
        assertThatThrownBy(() -> a.create(object("y"), new byte[0])).isInstanceOf(StorageException.class);
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "y"))).as("refused").isNull();
        gcs.faults().client("a").heal();
        a.create(object("y"), new byte[0]);
    }

    @Test
    void aPartitionMidRequestCanWaitForTheNextRequestOfOneOperation() {
        Storage a = client("a", Duration.ofSeconds(2));
        a.create(object("x"), new byte[0]);
        gcs.faults().client("a").partitionAfterNextRequest(ClientFaults.Partition.FAIL, Operation.INSERT);
        assertThat(a.get(BlobId.of(BUCKET, "x"))).as("a read before the create is served").isNotNull();
        assertThatThrownBy(() -> a.create(object("y"), new byte[0])).isInstanceOf(StorageException.class);
        assertThat(gcs.storage().get(BlobId.of(BUCKET, "y"))).as("the create committed").isNotNull();
        assertThatThrownBy(() -> a.get(BlobId.of(BUCKET, "x"))).isInstanceOf(StorageException.class);
    }
}
