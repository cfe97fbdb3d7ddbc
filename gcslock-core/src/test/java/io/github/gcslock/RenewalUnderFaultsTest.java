package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@code renew(lease, ttl)} when GCS misbehaves (DESIGN.md "A lease's own TTL", rules 8 and 11). A renewal
 * either reached the object with its own TTL (it returns) or changed nothing (it throws, and the lease goes on
 * with the TTL, the cadence and the deadline it had); the refresh cadence always fits the shortest TTL the
 * object may carry. Each holder talks through its own client of the emulator, so its replies alone can be slowed.
 */
class RenewalUnderFaultsTest extends EmulatorTestBase {

    private GcsLockRegistry holderThrough(String client, Duration ttl, Duration refresh, Duration operationTimeout,
                                          CountDownLatch refreshFailed) {
        GcsLockRegistry r = GcsLockRegistry.builder(gcs.storage(client), BUCKET)
                .ttl(ttl).refreshInterval(refresh).maxRefreshFailures(3)
                .operationTimeout(operationTimeout)
                .writeRateWindow(Duration.ofMillis(20))
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0)
                .listener(new LockEventListener() {
                    @Override
                    public void refreshFailed(Lease lease, Exception error) {
                        refreshFailed.countDown();
                    }
                })
                .build();
        closeAfterTest(r);
        return r;
    }

    private final java.util.List<GcsLockRegistry> mine = new java.util.ArrayList<>();

    private void closeAfterTest(GcsLockRegistry r) {
        mine.add(r);
    }

    @org.junit.jupiter.api.AfterEach
    void closeMine() {
        gcs.faults().reset();
        mine.forEach(GcsLockRegistry::close);
    }

    private long storedTtlMillis(String name) {
        Blob b = object(name);
        return Long.parseLong(b.getMetadata().get("gcslock-ttl"));
    }

    /** Waits until the object was written {@code writes} more times, or the lease is no longer healthy. */
    private void awaitWritesOrLoss(String name, Lease lease, int writes) {
        long from = object(name).getMetageneration();
        await("'" + name + "' to be written " + writes + " more times, or its lease to be lost")
                .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> !lease.isHealthy() || object(name).getMetageneration() >= from + writes);
    }

    /**
     * Item 1. Interleaving: a 2 s lease is renewed to 1 min while every PATCH answers 503 (for longer than the
     * operation timeout); renew throws. GCS then answers normally. Before: the lease went on at the new TTL's
     * refresh interval (7.5 s) with the old deadline (1.6 s), and was lost 1.6 s later while GCS was healthy.
     * Now the failed renewal changes nothing: the lease refreshes every 250 ms, writing its 2 s TTL.
     */
    @Test
    void aRenewalToALongerTtlThatFailsLeavesTheLeaseAsItWas() {
        GcsLockRegistry r = holderThrough("h", Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofMillis(500),
                new CountDownLatch(1));
        Lease lease = r.tryAcquire("renew-longer", Duration.ofSeconds(2)).orElseThrow();

        gcs.faults().failNext(10_000, 503, Operation.PATCH);
        assertThatThrownBy(() -> r.renew(lease, Duration.ofMinutes(1)))
                .isInstanceOf(GcsLockException.class).hasMessageContaining("could not be renewed");
        gcs.faults().reset();

        // 1.6 s (the deadline span of the 2 s TTL) and more pass with GCS answering normally.
        awaitWritesOrLoss("renew-longer", lease, 8);
        assertThat(lease.isHealthy()).as("a healthy lease whose renewal failed once stays healthy: %s", lease).isTrue();
        assertThat(storedTtlMillis("renew-longer")).as("a renewal that threw changed nothing").isEqualTo(2000);
        lease.release();
        assertThat(object("renew-longer")).isNull();
    }

    /**
     * Guards the fix of item 1. Interleaving: a 30 s lease is renewed to 2 s; the PATCH commits but its reply
     * comes after the timeout, so renew throws, yet the object says 2 s and others may judge it by that (the
     * deadline is capped at the renewal's send + 1.6 s). The refreshes that follow must come at the 2 s TTL's
     * cadence (250 ms), not the 30 s TTL's (3 s), or the capped deadline passes first.
     */
    @Test
    void aRenewalToAShorterTtlWhoseReplyCameLateKeepsTheLeaseByRefreshingAtTheShorterCadence() {
        GcsLockRegistry r = holderThrough("h", Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofMillis(500),
                new CountDownLatch(1));
        Lease lease = r.tryAcquire("renew-shorter").orElseThrow();

        gcs.faults().client("h").slowReplies(1, Duration.ofMillis(1200));
        assertThatThrownBy(() -> r.renew(lease, Duration.ofSeconds(2))).isInstanceOf(GcsLockException.class);
        assertThat(storedTtlMillis("renew-shorter")).as("the renewal's PATCH committed").isEqualTo(2000);

        awaitWritesOrLoss("renew-shorter", lease, 4);
        assertThat(lease.isHealthy()).as("refreshed within the capped deadline: %s", lease).isTrue();
        assertThat(storedTtlMillis("renew-shorter")).as("the TTL in force is written again").isEqualTo(30_000);
        lease.release();
        assertThat(object("renew-shorter")).isNull();
    }

    /**
     * Item 2. Interleaving: a scheduled refresh of an 8 s lease commits but its reply comes after the timeout;
     * {@code renew(lease, 2 s)} sent right after meets 412, and the engine adopts that earlier refresh (rule 8).
     * Before: renew returned although its own PATCH never committed, and the object still said 8 s (a crashed
     * holder was taken over 8 s later, not 2 s). Now renew writes its TTL after adopting, or throws.
     */
    @Test
    void aRenewalThatAdoptsAnEarlierRefreshStillWritesItsOwnTtl() throws Exception {
        CountDownLatch refreshFailed = new CountDownLatch(1);
        GcsLockRegistry r = holderThrough("h", Duration.ofSeconds(8), Duration.ofSeconds(1), Duration.ofMillis(300),
                refreshFailed);
        Lease lease = r.tryAcquire("renew-adopts").orElseThrow();
        long metageneration = object("renew-adopts").getMetageneration();

        gcs.faults().client("h").slowReplies(1, Duration.ofMillis(1500)); // the next request is the scheduled refresh
        assertThat(refreshFailed.await(10, TimeUnit.SECONDS)).as("the scheduled refresh timed out").isTrue();
        assertThat(object("renew-adopts").getMetageneration()).as("... but committed").isEqualTo(metageneration + 1);

        r.renew(lease, Duration.ofSeconds(2));
        assertThat(storedTtlMillis("renew-adopts")).as("renew returned: its TTL is the object's").isEqualTo(2000);
        assertThat(lease.isHealthy()).isTrue();
        lease.release();
        assertThat(object("renew-adopts")).isNull();
    }
}
