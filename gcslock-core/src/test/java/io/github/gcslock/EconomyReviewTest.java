package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * An independent review of DESIGN.md rule 16 (the request economy of acquiring): each test is an attack on
 * the read-first / no-second-read / waiting-pace change, through the public API and the emulator's fault
 * hooks, asserting what must hold. The comment on each names the interleaving. Each failed on the engine as
 * reviewed and pins the fix of its finding; the attacks that held are in AcquireEconomyEdgeCasesTest. (Not fixed, so
 * not here: a create of an earlier call served later than one TTL is refused unread — rule 16 assumes a request
 * is not served later than one TTL after it was sent; a one-shot refuses unread, for a quarter of the last read
 * holder's TTL, an object of a holder with a much shorter TTL — mixed TTLs on one name.)
 */
class EconomyReviewTest extends EmulatorTestBase {

    // ------------------------------------------------------------------ liveness

    /**
     * Interleaving: r last saw "job" held (next look 7.5-15 s away). The holder releases. Thread W of r calls
     * acquire("job", 2 s): its look is not due within its wait, so it sleeps on the closing latch HOLDING the
     * name's local permit and ends "not acquired" without a request (rule 16). Meanwhile thread T of r — a cron
     * tick — calls tryAcquire("job"): the permit is taken, so it returns empty at once, without a request either.
     * The name was free the whole time and this process asked GCS nothing: exactly the "cron tick where nobody
     * runs because every process thought it knew" rule 16 says a one-shot attempt must never cause. (Before rule
     * 16 the waiter asked at its start and at its deadline, so the process asked at least once.)
     */
    @Test
    void aOneShotAttemptAsksWhileAnotherThreadOfThisProcessSleepsUntilItsNextLook() throws Exception {
        GcsLockRegistry other = longHolder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofSeconds(20), Duration.ofSeconds(30), 2.0));
        Lease held = other.tryAcquire("job").orElseThrow();
        // A waiting call of r sees it held: r's next look is due in 7.5-15 s (a waiting call's look sets the pace).
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(100))).isInstanceOf(LockNotAcquiredException.class);
        held.release();
        gcs.faults().resetCounters();
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> waiter = thread.submit(() -> r.acquire("job", Duration.ofSeconds(2)));
            sleep(300); // the waiter has the permit and sleeps until its next look
            Optional<Lease> tick = r.tryAcquire("job");
            long requestsOfTheTick = gcs.faults().objectRequests();
            assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockNotAcquiredException.class);
            assertThat(requestsOfTheTick).as("requests of a one-shot tryAcquire of a FREE name while another thread of "
                    + "this process sleeps (holding the local permit) until its next look").isGreaterThanOrEqualTo(1);
            assertThat(tick).as("the name was free: the one-shot tick should have taken it").isPresent();
        } finally {
            thread.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ cost

    /**
     * A 429 on the single-try create of a one-shot: GCS refused it (the write limit), so it certainly did not
     * commit. It is recorded as a create of unknown outcome all the same, for one TTL, so for that TTL every
     * refused create of this name that rule 16 would refuse unread is read (and sent through the retrying client).
     */
    @Test
    void aRateLimitedCreateIsNotRememberedAsOneThatMayHaveCommitted() {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = holder(); // TTL 20 s: the record of the 429'd create lasts the whole test
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty();
        held.release();

        gcs.faults().failNext(1, 429, Operation.INSERT);
        Lease mine = r.tryAcquire("job").orElseThrow(); // read 404, create 429, create again: acquired
        mine.release();
        held = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty(); // seen held again
        held.release();

        Lease[] winner = new Lease[1];
        gcs.faults().beforeNext(Operation.INSERT, () -> winner[0] = other.tryAcquire("job").orElseThrow());
        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).isEmpty();
        assertThat(winner[0].isHealthy()).isTrue();
        // Rule 16 (as of 230c600): a one-shot at a name whose objects it knew young a moment ago creates alone and
        // refuses a 412 unread — unless a create of ours may have committed unseen. The 429'd one cannot have.
        assertThat(reads()).as("a create refused while the name's objects are known young is not read (a 429 never commits)")
                .isZero();
    }

    // ------------------------------------------------------------------ cosmetic

    /**
     * A waiting call that ends without a request (its next look was not due) after a refused-unread sighting:
     * its message must not say that "it created the lock object just before us" — this call created nothing —
     * nor claim a holder it did not see now: it says that no request was made.
     */
    @Test
    void aWaitThatMadeNoRequestDoesNotSayItsCreateWasBeaten() {
        GcsLockRegistry other = holder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofSeconds(2), Duration.ofSeconds(30), 2.0));
        Lease held = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty(); // seen held (a one-shot look: sets no pace)
        held.release();
        gcs.faults().beforeNext(Operation.INSERT, () -> other.tryAcquire("job").orElseThrow());
        // A waiting call: reads the name free, its create is refused (the other won), not read: its next look is
        // 1-2 s away, beyond this wait. Here "it created the lock object just before us" is true.
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(300))).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("just before us");
        gcs.faults().resetCounters();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(100)))
                .isInstanceOf(LockNotAcquiredException.class)
                .satisfies(e -> assertThat(gcs.faults().objectRequests()).as("no look was due").isZero())
                .hasMessageNotContaining("just before us")
                .hasMessageContaining("no request was made");
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
