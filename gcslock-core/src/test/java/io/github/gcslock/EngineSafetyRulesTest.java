package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Regression tests for interleavings that broke the engine's promises under faults: lost or slow
 * replies, outages longer than the TTL, hanging requests, close() during a wait. Each test's Javadoc
 * writes down the interleaving; each fails when the rule it pins is removed (see dev/rule-mutations.py).
 */
class EngineSafetyRulesTest extends EmulatorTestBase {

    // ---------------------------------------------------------------- adoption after a long outage

    /**
     * Interleaving (two healthy holders): A's waiting acquire keeps one lease id for the whole wait.
     * Its first create commits but the reply is lost; every later create gets 412 from that object,
     * and those replies are lost too, for longer than the TTL. When replies come back, a create gets
     * 412, the GET shows A's owner and lease id, and A adopts the object. The object was written more
     * than a TTL ago, so B (whose estimate of GCS time is anchored on its own writes) sees it stale,
     * deletes it with matching generation and metageneration, and creates its own lock — while A's
     * lease, dated from its last create, reports healthy.
     *
     * <p>Rule: the adopted object is dated from the earliest create whose outcome was unknown; when
     * that is older than a refresh interval, the object is confirmed with a PATCH guarded by its
     * generation and metageneration before it is handed out (so either A's PATCH or B's delete wins,
     * never both).
     */
    @Test
    void anObjectAdoptedAfterAnOutageLongerThanTheTtlIsConfirmedBeforeItIsHandedOut() throws Exception {
        GcsLockRegistry a = registry();
        GcsLockRegistry b = registry();
        b.tryAcquire("warm-up").orElseThrow().release(); // anchors B's GCS-time estimate on its own writes
        gcs.faults().dropReplies(1.0, Operation.INSERT);
        CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return a.acquire("job", Duration.ofSeconds(20));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> object("job") != null);
        long firstWrite = System.nanoTime();
        await().pollDelay(TTL.plusMillis(300)).atMost(TTL.plusSeconds(2)).until(() -> true);
        assertThat(System.nanoTime() - firstWrite).isGreaterThan(TTL.toNanos());
        gcs.faults().dropReplies(0);
        Lease lease = waiting.get(10, TimeUnit.SECONDS);

        assertThat(lease.isHealthy()).as("the confirmed lease is healthy: " + lease.lostReason().orElse("")).isTrue();
        Optional<Lease> other = b.tryAcquire("job");
        assertThat(other).as("B must not take over a lock A reports healthy").isEmpty();
        assertThat(lease.isHealthy()).isTrue();
        assertThat(object("job").getGeneration()).isEqualTo(lease.fencingToken());
    }

    // ---------------------------------------------------------------- refresh and release after slow replies

    /**
     * Interleaving (a healthy lease declared lost, its object leaked): refresh R1 (PATCH guarded by
     * metageneration m) is slowed past the operation timeout but still commits (m+1, carrying R1's
     * id); the refresher counts it as a failure. Refresh R2 (still guarded by m) gets 412; the GET
     * shows our owner and lease with R1's id. Remembering only the current refresh's id, the engine
     * declared the lease LOST, and release, deleting with m, got 412 and left the object until the TTL.
     *
     * <p>Rule: a refresh whose outcome is unknown stays adoptable: its id and the metageneration it
     * was guarded by are remembered until a later refresh is confirmed.
     */
    @Test
    void aRefreshThatCommittedAfterItsTimeoutIsAdoptedByTheNextRefresh() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1))
                .operationTimeout(Duration.ofMillis(300)));
        AtomicInteger failures = new AtomicInteger();
        r.addListener(new LockEventListener() {
            @Override
            public void refreshFailed(Lease lease, Exception error) {
                failures.incrementAndGet();
            }
        });
        Lease lease = r.tryAcquire("job").orElseThrow();
        // R1 commits 100 ms after the client gave up on it, and before R2 is sent (one interval later).
        gcs.faults().beforeNext(Operation.PATCH, () -> sleep(400));
        await().atMost(Duration.ofSeconds(6)).until(() -> object("job").getMetageneration() >= 3 || !lease.isHealthy());
        assertThat(failures).as("R1 timed out").hasValue(1);
        assertThat(lease.isHealthy()).as(lease.lostReason().orElse("healthy")).isTrue();
        lease.release();
        assertThat(object("job")).as("released").isNull();
    }

    /**
     * Interleaving (leak): the last refresh commits after its timeout (m → m+1) and the holder then
     * releases before another refresh: the DELETE guarded by m gets 412, which was read as "taken
     * over", so our object stayed until its TTL and blocked every other process.
     *
     * <p>Rule: a release that meets 412 reads the object once; if it is still ours (same generation,
     * our owner and lease) it deletes it guarded by the generation and metageneration it read.
     */
    @Test
    void releaseAfterARefreshWhoseReplyCameTooLateStillDeletesTheObject() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1))
                .operationTimeout(Duration.ofMillis(300)));
        Lease lease = r.tryAcquire("job").orElseThrow();
        gcs.faults().beforeNext(Operation.PATCH, () -> sleep(400));
        // The slow PATCH has committed (metageneration 2) but the engine only knows metageneration 1;
        // the next refresh is still ~900 ms away.
        await().atMost(Duration.ofSeconds(3)).until(() -> object("job").getMetageneration() == 2);
        lease.release();
        assertThat(object("job")).as("our object is deleted even though our last refresh was unconfirmed").isNull();
    }

    /** A release that meets 412 because someone else holds the name now leaves their object alone. */
    @Test
    void releaseOfATakenOverLockLeavesTheNewHoldersObject() {
        GcsLockRegistry a = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1)));
        Lease lease = a.tryAcquire("job").orElseThrow();
        Blob foreign = foreignRefresh("job"); // an administrator's PATCH: the object is still A's
        assertThat(foreign.getMetageneration()).isEqualTo(2L);
        storage.delete(foreign.getBlobId());
        Blob planted = plantForeignLock("job", Duration.ofSeconds(5));
        lease.release();
        assertThat(object("job").getGeneration()).isEqualTo(planted.getGeneration());
    }
}
