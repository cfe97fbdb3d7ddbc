package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * DESIGN.md rule 6, observed time: a process that reads a lock object less often than the GCS-time
 * estimate keeps its anchors (two TTLs) still takes a dead holder's lock over, and never a live one's.
 * Time is moved by the contender's injected ticker, so nothing sleeps.
 */
class ObservedTimeTest extends EmulatorTestBase {

    /**
     * The interleaving (found by an independent review): holder H writes its object at GCS time u and
     * dies. Contender C reads it at t0 (412 on create, then GET): its only anchor is (u, t0), and u + ttl
     * has not passed, so "busy". C does nothing with GCS for 2.5 TTLs (an hourly job, 5-minute TTL). At
     * its next look the anchor of t0 has expired (older than two TTLs) and the new read anchors at u
     * again, so the object, 2.5 TTLs old, is "not provably stale" — at every look, forever. With the
     * observed-time record C has seen the same version unchanged for 2.5 TTLs and takes it over.
     */
    @Test
    void aDeadLockIsTakenOverByAProcessThatLooksLessOftenThanTheAnchorWindow() {
        long[] shift = {0};
        plantForeignLock("hourly-job", TTL); // its holder died right after writing it
        GcsLockRegistry contender = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));

        assertThat(contender.tryAcquire("hourly-job")).as("first look: the lock was written a moment ago").isEmpty();
        shift[0] += TTL.multipliedBy(5).dividedBy(2).toNanos(); // 2.5 TTLs without any GCS request

        Optional<Lease> second = contender.tryAcquire("hourly-job");
        assertThat(second).as("second look, 2.5 TTLs later: nobody wrote the object, its holder is dead").isPresent();
        assertThat(second.get().isHealthy()).isTrue();
        second.get().release();
    }

    /** The same looks against a holder that refreshes between them: a changed version restarts the count. */
    @Test
    void aLockRefreshedBetweenLooksIsNotTakenOver() {
        long[] shift = {0};
        plantForeignLock("hourly-job", TTL);
        GcsLockRegistry contender = registry(b -> b.ticker(() -> System.nanoTime() + shift[0]));

        assertThat(contender.tryAcquire("hourly-job")).isEmpty();
        shift[0] += TTL.multipliedBy(5).dividedBy(2).toNanos();
        foreignRefresh("hourly-job"); // the holder is alive: it refreshed while we were not looking
        assertThat(contender.tryAcquire("hourly-job")).as("refreshed a moment ago").isEmpty();
        shift[0] += TTL.dividedBy(2).toNanos();
        assertThat(contender.tryAcquire("hourly-job")).as("this version seen for only half a TTL").isEmpty();
        assertThat(object("hourly-job").getMetadata()).containsEntry("gcslock-owner", "someone-else#dead");
    }
}
