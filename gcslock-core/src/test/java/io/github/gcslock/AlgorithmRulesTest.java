package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One test per rule of docs/DESIGN.md, each built so that it fails when its rule is removed from the
 * engine. The comment on each test names the race.
 */
class AlgorithmRulesTest extends EmulatorTestBase {

    // ---------------------------------------------------------------- acquire

    /**
     * Race: our create commits, its reply is lost, the client retries it and gets 412 from our own
     * object. Rule: owner+lease are this attempt's → adopt. Without it the engine would either report
     * "held" or delete its own fresh lock and create another (a new generation and two more requests).
     */
    @Test
    void adoptsItsOwnCreateWhoseReplyWasLost() {
        GcsLockRegistry r = registry();
        gcs.faults().resetCounters();
        gcs.faults().dropNextReply(Operation.INSERT);
        Lease lease = r.tryAcquire("job").orElseThrow();
        assertThat(gcs.faults().requestCount(Operation.INSERT)).as("first try + the client's retry").isEqualTo(2);
        assertThat(gcs.faults().requestCount(Operation.GET)).isEqualTo(1);
        assertThat(gcs.faults().requestCount(Operation.DELETE)).as("nothing deleted").isZero();
        Blob b = object("job");
        assertThat(lease.fencingToken()).isEqualTo(b.getGeneration());
        assertThat(lease.isHealthy()).isTrue();
    }

    /**
     * Race: a release of ours failed (or a thread died holding the lease) and left our object behind.
     * Rule: owner is this process but no live lease has that id → delete and retake at once, rather
     * than waiting a whole TTL for our own garbage.
     */
    @Test
    void retakesALeaseThisProcessLeakedAtOnce() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofMinutes(5)).refreshInterval(Duration.ofSeconds(30))
                .operationTimeout(Duration.ofMillis(300)));
        Lease first = r.tryAcquire("job").orElseThrow();
        gcs.faults().failNext(1000, 503, Operation.DELETE);
        first.release(); // cannot delete: the object leaks
        gcs.faults().reset();
        assertThat(object("job")).isNotNull();
        Lease second = r.tryAcquire("job").orElseThrow();
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
    }

    /** The same leaked object is not taken by another process before its TTL: only its owner may retake it early. */
    @Test
    void anotherProcessDoesNotTakeALeakedLockBeforeItsTtl() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofMinutes(5)).refreshInterval(Duration.ofSeconds(30))
                .operationTimeout(Duration.ofMillis(300)));
        GcsLockRegistry other = registry();
        Lease first = r.tryAcquire("job").orElseThrow();
        gcs.faults().failNext(1000, 503, Operation.DELETE);
        first.release();
        gcs.faults().reset();
        assertThat(other.tryAcquire("job")).isEmpty();
    }

    /**
     * A holder that stopped refreshing (crashed) is taken over once it is provably stale, and the
     * takeover is reported.
     */
    @Test
    void takesOverALockWhoseHolderStoppedRefreshing() throws Exception {
        List<LockInfo> takeovers = new CopyOnWriteArrayList<>();
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void tookOver(String name, LockInfo staleHolder) {
                takeovers.add(staleHolder);
            }
        }));
        Blob dead = plantForeignLock("job", Duration.ofMillis(300));
        Lease lease = r.acquire("job", Duration.ofSeconds(5));
        assertThat(lease.fencingToken()).isGreaterThan(dead.getGeneration());
        assertThat(takeovers).singleElement().satisfies(i -> assertThat(i.owner()).isEqualTo("someone-else#dead"));
    }

    /**
     * Race (DESIGN.md rule 5): we read a stale-looking lock, then its holder refreshes (or another contender
     * takes over) before our DELETE arrives. Rule: delete with ifMetagenerationMatch=<seen> (and the
     * generation), so the delete fails and the live holder keeps its lock.
     */
    @Test
    void staleTakeoverDoesNotDeleteALockRefreshedBetweenReadAndDelete() {
        GcsLockRegistry r = registry();
        staleForeignLockSeenBy(r, "job", () -> foreignRefresh("job"));
        assertThat(r.tryAcquire("job")).as("the holder refreshed inside our read-delete window").isEmpty();
        Blob still = object("job");
        assertThat(still).isNotNull();
        assertThat(still.getMetadata()).containsEntry("gcslock-owner", "someone-else#dead");
        assertThat(still.getMetageneration()).isEqualTo(2L);
    }

    /**
     * Rule 16 after a refused takeover: the DELETE met 412, so the object changed since our read (its holder refreshed);
     * the next request is a read of it, never a create that GCS would refuse and that would need the read anyway. Found
     * by {@code EngineInterleavingExplorerTest} (issue 29, long run, random seed 4650735212658955607 of the hostile
     * programs: "p3's wait for 'y' [create 412, get 200, delete 412, create 412, get 200] sent 2 creates for 0 looks
     * that found the name free").
     */
    @Test
    void aRefusedTakeoverReadsTheObjectNextInsteadOfCreating() {
        GcsLockRegistry r = registry();
        staleForeignLockSeenBy(r, "job", () -> foreignRefresh("job"));
        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).as("the holder refreshed inside our read-delete window").isEmpty();
        assertThat(gcs.faults().requestCount(Operation.DELETE)).as("the takeover's DELETE").isEqualTo(1);
        assertThat(inserts()).as("creates after the refused takeover").isZero();
        // the look, the holder's own read inside foreignRefresh, then the object again after the refused DELETE
        assertThat(reads()).as("reads").isEqualTo(3);
    }

    /**
     * Rule 16: a takeover DELETE that finds the stale object already gone (404: deleted by another contender or its late
     * holder between our GET and our DELETE) found the name free: the next request is the create, not a read. Only a
     * refused DELETE (412: the object changed) is followed by a read. Found by an independent review of 19e94d4, which
     * read after both.
     */
    @Test
    void aTakeoverDeleteThatFindsTheObjectGoneCreatesWithoutAnotherRead() {
        GcsLockRegistry r = registry();
        staleForeignLockSeenBy(r, "job", () -> {
            storage.delete(BlobId.of(BUCKET, "gcslock/job")); // gone before our takeover DELETE is processed
            sleep(200); // past the emulator's (scaled) write window, so that our DELETE meets 404, not 429
        });
        gcs.faults().resetCounters();
        Lease got = r.tryAcquire("job").orElseThrow(() -> new AssertionError("the name was free"));
        long deletes = gcs.faults().requestCount(Operation.DELETE); // ours and the test's
        // the look; then, after the DELETE that found nothing, a create (no read: a 404 says the name is free)
        assertThat(reads()).as("reads (DELETEs %d, creates %d)", deletes, inserts()).isEqualTo(1);
        assertThat(inserts()).as("creates").isEqualTo(1);
        got.release();
    }

    /**
     * Race: between our GET and our DELETE the stale object is replaced by a new holder's object whose
     * metageneration equals the one we saw (every new object starts at 1). A metageneration-only
     * precondition would delete the new holder's lock; the generation precondition prevents it.
     */
    @Test
    void staleTakeoverDoesNotDeleteANewHoldersObjectWithTheSameMetageneration() {
        GcsLockRegistry r = registry();
        GcsLockRegistry newHolder = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1)));
        AtomicBoolean replaced = new AtomicBoolean();
        staleForeignLockSeenBy(r, "job", () -> {
            storage.delete(BlobId.of(BUCKET, "gcslock/job"));
            replaced.set(newHolder.tryAcquire("job").isPresent());
        });
        assertThat(r.tryAcquire("job")).isEmpty();
        assertThat(replaced).isTrue();
        assertThat(object("job").getMetadata()).containsEntry("gcslock-owner", newHolder.owner());
    }

    /** A lock whose holder refreshes is never taken over, however long a contender waits. */
    @Test
    void aRefreshedLockIsNeverTakenOver() throws Exception {
        // TTL 2 s, refresh every 200 ms: a starved machine (CI on 2 busy cores) can delay one refresh by
        // hundreds of ms; then the holder rightly loses its lease (deadline rule) and a takeover is no bug.
        // The contender waits 1.5 TTLs: without refreshes it takes the lock over after one TTL.
        GcsLockRegistry holder = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(200)));
        GcsLockRegistry contender = registry();
        Lease lease = holder.acquire("job", Duration.ZERO);
        assertThat(contender.tryAcquire("job")).isEmpty();
        try {
            contender.acquire("job", Duration.ofMillis(3000));
            throw new AssertionError("took over a live lock (holder healthy: " + lease.isHealthy() + ", "
                    + lease.lostReason().orElse("not lost") + ")");
        } catch (LockNotAcquiredException expected) {
            assertThat(expected.holder()).isPresent();
        }
        assertThat(lease.isHealthy()).isTrue();
    }

    /**
     * Transient errors are not "not acquired": tryAcquire says GCS could not be asked; acquire retries
     * them within its wait and succeeds when GCS recovers.
     */
    @Test
    void transientErrorsDuringAcquireAreRetriedOrReported() throws Exception {
        GcsLockRegistry r = registry(b -> b.operationTimeout(Duration.ofMillis(200)));
        gcs.faults().failNext(10_000, 503, Operation.INSERT);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> r.tryAcquire("job"))
                .isInstanceOf(GcsLockException.class)
                .isNotInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("unknown whether the lock is free");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(300)))
                .isInstanceOfSatisfying(LockNotAcquiredException.class,
                        e -> assertThat(e.getMessage()).contains("last GCS error"));
        gcs.faults().reset();
        gcs.faults().failNext(30, 429, Operation.INSERT);
        Lease lease = r.acquire("job", Duration.ofSeconds(10));
        assertThat(lease.isHealthy()).isTrue();
    }

    // ---------------------------------------------------------------- refresh

    /** Refresh 404 (deleted by an administrator) → LOST, listeners told, checkHealthy throws. */
    @Test
    void refreshOfADeletedLockDeclaresItLost() throws Exception {
        GcsLockRegistry r = registry();
        Lease lease = r.acquire("job", Duration.ZERO);
        List<String> told = new CopyOnWriteArrayList<>();
        lease.onLost((l, e) -> told.add(e.getMessage()));
        storage.delete(BlobId.of(BUCKET, "gcslock/job"));
        await("the lease to be lost after its object was deleted")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        assertThat(lease.lostReason()).hasValueSatisfying(s -> assertThat(s).contains("deleted"));
        await("the lost listener to be told, on a listener thread")
                .atMost(Duration.ofSeconds(30)).untilAsserted( // told on a listener thread
                () -> assertThat(told).singleElement().satisfies(m -> assertThat(m).contains("'job'")));
        org.assertj.core.api.Assertions.assertThatThrownBy(lease::checkHealthy).isInstanceOf(LockLostException.class);
    }

    /** Refresh 412 because someone else changed the object → LOST (and we do not touch their object). */
    @Test
    void refreshOfALockChangedBySomeoneElseDeclaresItLost() throws Exception {
        GcsLockRegistry r = registry();
        Lease lease = r.acquire("job", Duration.ZERO);
        foreignRefresh("job");
        await("the lease to be lost after someone else changed its object")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        assertThat(lease.lostReason()).hasValueSatisfying(s -> assertThat(s).contains("changed by someone else"));
    }

    /**
     * Race: our PATCH commits, its reply is lost, the client retries and gets 412 from our own change.
     * Rule: GET once; ours and exactly one metageneration ahead → adopt, still healthy.
     */
    @Test
    void adoptsItsOwnRefreshWhoseReplyWasLost() throws Exception {
        GcsLockRegistry r = registry();
        Lease lease = r.acquire("job", Duration.ZERO);
        gcs.faults().dropNextReply(Operation.PATCH);
        await("the refresh whose reply was dropped to be retried and its own change adopted")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job").getMetageneration() >= 4);
        assertThat(lease.isHealthy()).as(lease.lostReason().orElse("")).isTrue();
    }

    /** Transient refresh failures below the limit keep the lease; reaching the limit loses it. */
    @Test
    void consecutiveRefreshFailuresUpToTheLimitLoseTheLease() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(3)).refreshInterval(Duration.ofMillis(150))
                .maxRefreshFailures(3).operationTimeout(Duration.ofMillis(100)));
        Lease lease = r.acquire("job", Duration.ZERO);
        gcs.faults().failNext(10_000, 503, Operation.PATCH);
        await("the lease to be lost after 3 refreshes in a row failed")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        assertThat(lease.lostReason()).hasValueSatisfying(s -> assertThat(s).contains("3 consecutive refreshes failed"));
    }

    @Test
    void aFewTransientRefreshFailuresKeepTheLease() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(3)).refreshInterval(Duration.ofMillis(150))
                .maxRefreshFailures(3).operationTimeout(Duration.ofMillis(100)));
        Lease lease = r.acquire("job", Duration.ZERO);
        long metaBefore = object("job").getMetageneration();
        gcs.faults().failNext(2, 503, Operation.PATCH);
        await("a refresh to succeed after two failed ones")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job").getMetageneration() > metaBefore);
        assertThat(lease.isHealthy()).isTrue();
    }

    /**
     * Deadline rule: refreshes that hang (no error, just no answer) never count as failures; the lease
     * must still be declared lost before its TTL runs out on GCS, i.e. before anyone may take it over.
     */
    @Test
    void hangingRefreshesLoseTheLeaseBeforeAnyoneCanTakeItOver() throws Exception {
        GcsLockRegistry holder = registry(b -> b.ttl(Duration.ofMillis(1000)).refreshInterval(Duration.ofMillis(200))
                .operationTimeout(Duration.ofSeconds(5)));
        Lease lease = holder.acquire("job", Duration.ZERO);
        gcs.faults().latency(Duration.ofSeconds(3), Duration.ofSeconds(3));
        long lostAt = -1;
        long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        while (System.nanoTime() < deadline) {
            if (!lease.isHealthy()) {
                lostAt = System.nanoTime();
                break;
            }
            Thread.sleep(5);
        }
        assertThat(lostAt).as("lease declared lost").isPositive();
        assertThat(lease.lostReason()).hasValueSatisfying(s -> assertThat(s).contains("no refresh was confirmed"));
        // Nobody could have taken over yet: the object is still ours and not stale in GCS time.
        gcs.faults().reset();
        Blob b = object("job");
        assertThat(b.getGeneration()).isEqualTo(lease.fencingToken());
        assertThat(java.time.Instant.now()).isBefore(b.getUpdateTimeOffsetDateTime().toInstant().plus(TTL));
    }

    /** A process paused past its deadline sees isHealthy() false on its very first check after resuming. */
    @Test
    void aPausedHolderSeesItsLeaseUnhealthyOnItsFirstCheck() throws Exception {
        long[] now = {System.nanoTime()};
        GcsLockRegistry r = registry(b -> b.ticker(() -> now[0]).ttl(Duration.ofMinutes(1)).refreshInterval(Duration.ofSeconds(10)));
        Lease lease = r.acquire("job", Duration.ZERO);
        assertThat(lease.isHealthy()).isTrue();
        now[0] += Duration.ofSeconds(55).toNanos(); // a GC pause / SIGSTOP: no thread ran meanwhile
        assertThat(lease.isHealthy()).isFalse();
        assertThat(lease.lostReason()).hasValueSatisfying(s -> assertThat(s).contains("no refresh was confirmed"));
    }

    // ---------------------------------------------------------------- release

    /**
     * Race (DESIGN.md rule 12, an unintended release): our lease was lost and the lock taken by someone else whose
     * object happens to have our last metageneration. Rule: release deletes with generation +
     * metageneration preconditions, so the new holder's lock survives our late release.
     */
    @Test
    void aLateReleaseNeverDeletesTheNextHoldersLock() {
        GcsLockRegistry a = registry(b -> b.ttl(Duration.ofMinutes(5)).refreshInterval(Duration.ofSeconds(30)));
        GcsLockRegistry b = registry(x -> x.ttl(Duration.ofMinutes(5)).refreshInterval(Duration.ofSeconds(30)));
        Lease old = a.tryAcquire("job").orElseThrow();
        storage.delete(BlobId.of(BUCKET, "gcslock/job")); // an administrator force-deletes it
        Lease next = b.tryAcquire("job").orElseThrow();
        assertThat(object("job").getMetageneration()).isEqualTo(1L); // same metageneration as old's
        old.release();
        Blob still = object("job");
        assertThat(still).isNotNull();
        assertThat(still.getGeneration()).isEqualTo(next.fencingToken());
    }

    /** Release waits for an in-flight refresh, so it deletes with the metageneration that refresh produced. */
    @Test
    void releaseDuringARefreshStillDeletesTheObject() throws Exception {
        GcsLockRegistry r = registry(b -> b.refreshInterval(Duration.ofMillis(100)).ttl(Duration.ofSeconds(2)));
        for (int i = 0; i < 10; i++) {
            gcs.faults().latency(Duration.ofMillis(0), Duration.ofMillis(30));
            Lease lease = r.acquire("job", Duration.ZERO);
            Thread.sleep(80 + i * 7);
            lease.release();
            gcs.faults().reset();
            assertThat(object("job")).as("round " + i).isNull();
        }
    }

    /** Transient errors during release do not throw at the caller; the leaked object is retaken at once by us. */
    @Test
    void transientErrorsDuringReleaseAreLoggedNotThrown() {
        GcsLockRegistry r = registry(b -> b.operationTimeout(Duration.ofMillis(200)));
        Lease lease = r.tryAcquire("job").orElseThrow();
        gcs.faults().failNext(10_000, 503, Operation.DELETE);
        lease.release();
        gcs.faults().reset();
        assertThat(r.heldLeases()).isEmpty();
        assertThat(r.tryAcquire("job")).isPresent();
    }

    // ---------------------------------------------------------------- bounded operations

    /** The client's own retries would block a call for ~50 s; every lock operation is bounded. */
    @Test
    void everyOperationIsBoundedDespiteTheClientsOwnRetries() {
        GcsLockRegistry r = registry(b -> b.operationTimeout(Duration.ofMillis(300)));
        gcs.faults().failNext(10_000, 503, Operation.INSERT);
        long t0 = System.nanoTime();
        try {
            r.tryAcquire("job");
        } catch (GcsLockException expected) {
            // reported as unknown
        }
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
        assertThat(storage.getOptions().getRetrySettings().getTotalTimeoutDuration())
                .as("the caller's own client is not changed").isGreaterThan(Duration.ofSeconds(5));
    }

}
