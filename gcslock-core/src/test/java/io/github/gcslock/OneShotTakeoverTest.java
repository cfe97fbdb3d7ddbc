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
