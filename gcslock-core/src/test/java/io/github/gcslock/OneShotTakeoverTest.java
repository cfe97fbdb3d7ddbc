package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule 16, item 8: a one-shot job (a {@code tryAcquire} per tick) refuses a 412 unread for a quarter TTL after it
 * read a live holder's object — but never past the moment that object could first be stale (its {@code updated}
 * + its TTL, in the GCS-time bound): the first attempt after reads, so a crashed holder is taken over at the
 * first tick after its TTL, not up to a quarter TTL later. The job's monotonic clock is injected, so "when"
 * is exact: the GCS-time bound is the read's {@code updated} plus the ticker's advance since that read.
 */
class OneShotTakeoverTest extends EmulatorTestBase {

    /**
     * Interleaving: a dead holder's object (TTL 1 s, updated U). The job reads it at t0 (bound U), reads again at
     * t0 + 0.8 s (a quarter TTL passed; not stale yet), and tries again at t0 + 1.02 s. Before: 0.22 s after its
     * last read it still trusted that read for a quarter TTL, refused its create unread and stayed blind until
     * t0 + 1.05 s. Now its read at t0 + 0.8 s said the object could be stale from t0 + 1.001 s: it reads, finds
     * it stale and takes it over.
     */
    @Test
    void aDeadHolderIsTakenOverAtTheFirstAttemptAfterItsObjectCouldBeStale() {
        AtomicLong ticker = new AtomicLong(1_000_000_000L);
        GcsLockRegistry job = registry(b -> b.ticker(ticker::get));
        var dead = plantForeignLock("cron", TTL);

        assertThat(job.tryAcquire("cron")).as("t0: held, as far as it can tell").isEmpty();
        ticker.addAndGet(Duration.ofMillis(800).toNanos());
        long readsBefore = reads();
        assertThat(job.tryAcquire("cron")).as("t0 + 0.8 s: not stale yet").isEmpty();
        assertThat(reads() - readsBefore).as("a quarter TTL after its read, it reads").isEqualTo(1);

        ticker.addAndGet(Duration.ofMillis(220).toNanos());
        Optional<Lease> taken = job.tryAcquire("cron");
        assertThat(taken).as("t0 + 1.02 s: the object could be stale, so it is read, and taken over").isPresent();
        assertThat(taken.get().fencingToken()).isGreaterThan(dead.getGeneration());
        taken.get().release();
    }

    /**
     * Rule 16: a one-shot refuses unread for a quarter of "the holder's TTL as last read". Interleaving: a job whose
     * own TTL is 4 s reads a holder whose TTL is 1 s (its first sighting of the name), then tries again 100 ms and
     * 400 ms later. Before: the quarter came from the job's own TTL (1 s), or at later sightings from the holder of
     * the sighting before, so 400 ms after its read it still sent the create alone. Now it reads first once a
     * quarter of the read holder's TTL (250 ms) has passed.
     */
    @Test
    void aOneShotTrustsItsReadForAQuarterOfTheTtlOfTheHolderItRead() {
        AtomicLong ticker = new AtomicLong(1_000_000_000L);
        GcsLockRegistry job = registry(b -> b.ttl(Duration.ofSeconds(4)).refreshInterval(Duration.ofMillis(800)).ticker(ticker::get));
        plantForeignLock("cron", TTL);

        assertThat(job.tryAcquire("cron")).as("t0: the create, refused, and a read").isEmpty();
        ticker.addAndGet(Duration.ofMillis(100).toNanos());
        gcs.faults().resetCounters();
        assertThat(job.tryAcquire("cron")).isEmpty();
        assertThat(reads()).as("t0 + 100 ms, within a quarter of the read holder's TTL: the create alone").isZero();

        ticker.addAndGet(Duration.ofMillis(300).toNanos());
        gcs.faults().resetCounters();
        assertThat(job.tryAcquire("cron")).as("t0 + 400 ms: not stale yet").isEmpty();
        assertThat(reads()).as("t0 + 400 ms, past a quarter of the read holder's TTL (250 ms): it reads first").isEqualTo(1);
    }

    /** While the holder lives, a one-shot per tick costs one request per tick, as before. */
    @Test
    void whileTheHolderLivesEveryTickCostsOneRequest() {
        GcsLockRegistry holder = registry();
        GcsLockRegistry job = registry();
        Lease held = holder.tryAcquire("cron").orElseThrow();
        assertThat(job.tryAcquire("cron")).isEmpty(); // the first look: the create, refused, and a read
        long start = reads() + inserts();
        int ticks = 30;
        for (int i = 0; i < ticks; i++) {
            sleep(40);
            assertThat(job.tryAcquire("cron")).isEmpty();
        }
        assertThat(reads() + inserts() - start).as("one request per tick while the holder lives").isEqualTo(ticks);
        held.release();
    }
}
