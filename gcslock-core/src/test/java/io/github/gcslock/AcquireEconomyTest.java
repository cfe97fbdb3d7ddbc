package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * DESIGN.md rule 16, the request economy of acquiring: read first when the name was last seen held by
 * another process, no second read after a refused create only when that is safe, the waiting pace kept
 * across calls. Each test counts the requests the emulator received and says who acquired; the comment on
 * each names the interleaving that could break safety or liveness.
 */
class AcquireEconomyTest extends EmulatorTestBase {

    /**
     * A one-shot attempt (tryAcquire) at a name this process saw held by another moments ago costs 1 request:
     * the create, refused (412) without a read — any object of the name is young, since this process knew it
     * so less than a quarter of a TTL ago. Free: the same create acquires it (1 request). A name never looked at
     * is created and read on 412 as before (it may be stale, or a leak of ours).
     */
    @Test
    void aOneShotAttemptAtANameSeenHeldMomentsAgoCostsOneRequest() {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry();
        Lease held = other.tryAcquire("job").orElseThrow();

        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).as("never looked: create, read on 412").isEmpty();
        assertThat(inserts()).isEqualTo(1);
        assertThat(reads()).isEqualTo(1);

        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).as("seen held moments ago: the create alone").isEmpty();
        assertThat(inserts()).isEqualTo(1);
        assertThat(reads()).isZero();

        held.release();
        gcs.faults().resetCounters();
        Lease mine = r.tryAcquire("job").orElseThrow();
        assertThat(inserts()).as("free: the create acquires it").isEqualTo(1);
        assertThat(reads()).isZero();
        assertThat(mine.fencingToken()).isEqualTo(object("job").getGeneration());

        mine.release();
    }

    /**
     * The previous cron tick's winner: it released cleanly (its guarded DELETE deleted its object), so no
     * object of its own is left and any object now is younger than that release; losing the next race costs
     * it the create alone (1 request). A release that could not delete leaves it creating and reading (rule 4
     * must still find a leak of ours) — pinned by AlgorithmRulesTest#retakesALeaseThisProcessLeakedAtOnce.
     */
    @Test
    void aOneShotAfterACleanReleaseLosesWithTheCreateAlone() {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2)));
        r.tryAcquire("job").orElseThrow().release();
        Lease theirs = other.tryAcquire("job").orElseThrow();
        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).isEmpty();
        assertThat(inserts()).isEqualTo(1);
        assertThat(reads()).as("released cleanly a moment ago: no read").isZero();
        theirs.release();
    }

    /**
     * Once that knowledge is older than a quarter of the TTL, a one-shot attempt reads first (1 request while
     * held, and the knowledge is fresh again); a waiter's looks always read (polls are reads, never writes).
     */
    @Test
    void aNameSeenHeldLongerAgoOrByAWaiterIsReadFirst() throws Exception {
        GcsLockRegistry other = registry(); // TTL 1 s: knowledge is fresh for 250 ms
        GcsLockRegistry r = registry();
        other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        sleep(300);
        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).isEmpty();
        assertThat(reads()).isEqualTo(1);
        assertThat(inserts()).isZero();

        gcs.faults().resetCounters();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(150))).isInstanceOf(LockNotAcquiredException.class);
        assertThat(inserts()).as("a waiter's looks are reads").isZero();
        assertThat(reads()).isPositive();
    }

    /**
     * A dead holder is still taken over by a process that only makes one-shot attempts: while its knowledge
     * is fresh it refuses unread, but it reads at least every quarter of the holder's TTL, so it proves the
     * object stale (rule 6, the same version seen unchanged for longer than its TTL) and takes it over (rule 5).
     */
    @Test
    void aDeadHolderIsTakenOverByAProcessThatOnlyTriesOnce() {
        GcsLockRegistry r = registry();
        var dead = plantForeignLock("job", Duration.ofMillis(400));
        Lease mine = null;
        for (int i = 0; i < 60 && mine == null; i++) {
            mine = r.tryAcquire("job").orElse(null);
            sleep(50);
        }
        assertThat(mine).as("taken over within 3 s").isNotNull();
        assertThat(mine.fencingToken()).isGreaterThan(dead.getGeneration());
    }

    /**
     * Interleaving: our read finds the name free, another process creates it, our create is refused (412).
     * The object was made after our read, so it is younger than our call and cannot be stale, and our create
     * was one request (no retry of ours can have made it): refuse without a second read.
     */
    @Test
    void aCreateRefusedAfterTheNameWasSeenFreeIsNotReadAgain() {
        GcsLockRegistry other = registry(); // TTL 1 s: r's knowledge is fresh for 250 ms
        GcsLockRegistry r = registry();
        Lease first = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty(); // r saw it held
        sleep(300); // ... long enough ago that r reads first
        first.release();

        Lease[] winner = new Lease[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> winner[0] = other.tryAcquire("job").orElseThrow());
        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).isEmpty();
        assertThat(reads()).as("only the read that found it free").isEqualTo(1);
        assertThat(inserts()).as("the other's create and ours").isEqualTo(2);
        assertThat(winner[0].isHealthy()).isTrue();
        assertThat(object("job").getGeneration()).isEqualTo(winner[0].fencingToken());
    }

    /**
     * Interleaving: the name is free (this process saw it held moments ago, so a 412 would be refused unread);
     * our create commits but its reply is lost; the client's retry (tryAcquire's client retries by itself)
     * gets 412 from our own object. Refusing without a read would leak
     * our own object until its TTL — a cron tick where nobody runs. Rule: after a create whose outcome is
     * unknown the object is read, and it is ours (rule 3): adopted.
     */
    @Test
    void aRefusedCreateThatMayBeOurOwnIsReadAndAdopted() {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry();
        Lease first = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        first.release();

        gcs.faults().dropNextReply(Operation.INSERT);
        gcs.faults().resetCounters();
        Lease mine = r.tryAcquire("job").orElseThrow();
        assertThat(reads()).as("the read after the 412 (the create alone would have been refused unread)").isEqualTo(1);
        assertThat(gcs.faults().requestCount(Operation.DELETE)).as("adopted, not deleted").isZero();
        assertThat(mine.fencingToken()).isEqualTo(object("job").getGeneration());
        assertThat(object("job").getMetadata()).containsEntry("gcslock-owner", r.owner());
    }

    /** The same in a waiting acquire (its client does not retry): the next look is a read that finds our object. */
    @Test
    void aWaiterWhoseCreateReplyWasLostAdoptsItsObjectAtTheNextRead() throws Exception {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry();
        Lease first = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        first.release();

        gcs.faults().dropNextReply(Operation.INSERT);
        gcs.faults().resetCounters();
        Lease mine = r.acquire("job", Duration.ofSeconds(5));
        assertThat(mine.fencingToken()).isEqualTo(object("job").getGeneration());
        assertThat(inserts()).as("one create, adopted at the next read").isEqualTo(1);
        assertThat(gcs.faults().requestCount(Operation.DELETE)).isZero();
    }

    /**
     * Interleaving (a slow request that still commits): a create of an earlier call timed out on our side but
     * is still being served; the name is free; then that old create commits, then our next call's create gets
     * 412 — from our own object of the earlier call. Refusing unread would leave it until its TTL.
     * Rule: while a create of ours of unknown outcome may still commit (one TTL), the 412 is read; the object
     * is ours with no live lease, so it is retaken at once (rule 4).
     */
    @Test
    void aCreateOfAnEarlierCallThatCommitsLateIsReadAndRetaken() throws Exception {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry();
        Lease first = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        first.release();

        CountDownLatch slowCreateArrived = new CountDownLatch(1);
        CountDownLatch letItCommit = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            slowCreateArrived.countDown();
            awaitQuietly(letItCommit);
        });
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<?> earlierCall = thread.submit(() -> r.tryAcquire("job"));
            assertThat(slowCreateArrived.await(5, TimeUnit.SECONDS)).isTrue();
            gcs.faults().failNext(1000, 503, Operation.INSERT); // the client's retries of it fail
            assertThatThrownBy(() -> earlierCall.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(GcsLockException.class);
            gcs.faults().reset(); // the slow create, still held back, will commit
            gcs.faults().beforeNext(Operation.INSERT, () -> {
                letItCommit.countDown();
                await("the slow create, now let through, to commit its object")
                        .atMost(Duration.ofSeconds(30)).until(() -> object("job") != null);
            });
            Lease mine = r.tryAcquire("job").orElseThrow();
            assertThat(mine.fencingToken()).isEqualTo(object("job").getGeneration());
            assertThat(object("job").getMetadata()).containsEntry("gcslock-lease", mine.leaseId());
        } finally {
            letItCommit.countDown();
            thread.shutdownNow();
        }
    }

    /**
     * A follower calling tryLock(100 ms) back to back while another process leads: the pace of its looks is
     * kept across calls, so ten calls cost about one look per poll interval, not a create + read each.
     * A look not yet due is waited for (within the call's wait), not sent.
     */
    @Test
    void backToBackShortWaitsKeepThePaceOfTheLooksAcrossCalls() throws Exception {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofSeconds(2), Duration.ofSeconds(30), 2.0));
        other.tryAcquire("job").orElseThrow();
        gcs.faults().resetCounters();
        for (int i = 0; i < 10; i++) {
            assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(100)))
                    .isInstanceOf(LockNotAcquiredException.class)
                    .satisfies(e -> assertThat(((LockNotAcquiredException) e).holder()).hasValueSatisfying(
                            h -> assertThat(h.owner()).isEqualTo(other.owner())));
        }
        // The first call creates and reads; the next look is due 1-2 s later (the poll interval starts at
        // the backoff's initial 2 s, jittered down to half), so the nine calls within that second send nothing.
        assertThat(inserts() + reads()).as("requests of ten back-to-back calls").isLessThanOrEqualTo(3);
    }

    /** A one-shot tryAcquire always asks (a cron tick must not end with nobody running), even before the next look is due. */
    @Test
    void aOneShotAttemptAlwaysMakesARequest() throws Exception {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofSeconds(2), Duration.ofSeconds(30), 2.0));
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(100))).isInstanceOf(LockNotAcquiredException.class);
        gcs.faults().resetCounters(); // the waiting call's next look is due in 1-2 s
        assertThatThrownBy(() -> r.acquire("job", Duration.ZERO)).isInstanceOf(LockNotAcquiredException.class);
        assertThat(reads() + inserts()).as("a wait of zero asks").isEqualTo(1);
        assertThat(r.tryAcquire("job")).isEmpty();
        assertThat(reads() + inserts()).as("tryAcquire asks").isEqualTo(2);
        held.release();
        assertThat(r.tryAcquire("job")).as("released between looks: the one-shot sees it").isPresent();
    }

    /**
     * A one-shot look (tryAcquire, a SKIP) paces no wait: after the holder releases, this process's next
     * waiting call looks at once and takes the lock, rather than waiting for a look scheduled by the one-shot.
     */
    @Test
    void aWaitingCallAfterAOneShotLookAsksAtOnce() throws Exception {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofSeconds(2), Duration.ofSeconds(30), 2.0));
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        held.release();
        Lease mine = r.acquire("job", Duration.ofMillis(500));
        assertThat(mine.fencingToken()).isEqualTo(object("job").getGeneration());
    }

    /**
     * Interleaving: close() while a waiter sleeps until its next look, due seconds away (kept from an earlier
     * call): the sleep is on the closing latch, so the waiter fails at once with a clear exception.
     */
    @Test
    void closeWakesAWaiterSleepingUntilItsNextLook() throws Exception {
        GcsLockRegistry other = registry(b -> b.ttl(Duration.ofSeconds(60)).refreshInterval(Duration.ofSeconds(2)));
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofSeconds(20), Duration.ofSeconds(30), 2.0));
        other.tryAcquire("job").orElseThrow();
        // A waiting call's next look is due in 7.5-15 s (cap: the holder's TTL / 4)
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(100))).isInstanceOf(LockNotAcquiredException.class);
        gcs.faults().resetCounters();
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> waiter = thread.submit(() -> r.acquire("job", Duration.ofSeconds(30)));
            sleep(200);
            r.close();
            assertThatThrownBy(() -> waiter.get(3, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
                    .cause().hasMessageContaining("'job'").hasMessageContaining("closed");
            assertThat(gcs.faults().objectRequests()).as("no look was due").isZero();
        } finally {
            thread.shutdownNow();
        }
    }

    /**
     * A waiter whose create met 429 (the holder's delete was under a write window ago) creates again after the
     * window without reading first: it saw the name free a moment ago.
     */
    @Test
    void aWaiterCreatesAgainWithoutAReadAfterItsCreateMet429() throws Exception {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry();
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(50))).isInstanceOf(LockNotAcquiredException.class);
        held.release();
        gcs.faults().failNext(1, 429, Operation.INSERT);
        gcs.faults().resetCounters();
        Lease mine = r.acquire("job", Duration.ofSeconds(5));
        assertThat(reads()).as("the read that found it free, none after the 429").isEqualTo(1);
        assertThat(inserts()).isEqualTo(2);
        assertThat(mine.fencingToken()).isEqualTo(object("job").getGeneration());
    }

    /** The name released between looks: the waiter's next look reads it free and creates (2 requests), and it holds it. */
    @Test
    void aWaiterAcquiresANameReleasedBetweenItsLooks() throws Exception {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofMillis(400), Duration.ofSeconds(2), 2.0));
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> waiter = thread.submit(() -> r.acquire("job", Duration.ofSeconds(10)));
            held.release();
            Lease mine = waiter.get(10, TimeUnit.SECONDS);
            assertThat(mine.fencingToken()).isEqualTo(object("job").getGeneration());
            assertThat(mine.isHealthy()).isTrue();
        } finally {
            thread.shutdownNow();
        }
    }

    /** A dead holder: the read-first look that proves it stale deletes it (guarded, rule 5) and creates, with no second read. */
    @Test
    void aWaiterTakesOverADeadHolderFromItsRead() throws Exception {
        GcsLockRegistry r = registry();
        var dead = plantForeignLock("job", Duration.ofMillis(300));
        assertThat(r.tryAcquire("job")).isEmpty();
        Lease mine = r.acquire("job", Duration.ofSeconds(5));
        assertThat(mine.fencingToken()).isGreaterThan(dead.getGeneration());
        assertThat(gcs.faults().requestCount(Operation.DELETE)).isEqualTo(1);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
