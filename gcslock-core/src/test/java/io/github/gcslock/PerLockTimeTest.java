package io.github.gcslock;

import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.LockHistory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule 6 per lock: the drift budget of a lock's staleness judgement is bounded by its own TTL, not by the
 * longest TTL this process ever judged (item 3); and looking at locks ({@code list()}, {@code inspect()})
 * never makes acquisition blind (item 4).
 */
class PerLockTimeTest extends EmulatorTestBase {

    /**
     * Item 3, on the estimator alone. Interleaving: one look at a lock held with a 1 h TTL, then a 1 s lock
     * judged on an anchor 5 s old (a 20 % fast clock would have added 1 s of error by then). Before: the window
     * stayed two hours after that look, and the old anchor proved the 1 s lock stale. Now a 1 s lock is judged
     * on anchors of its own window (2 s) only: none is left, so it is not provably stale on this estimate.
     */
    @Test
    void aLockIsJudgedOnAnchorsOfItsOwnWindowOnly() {
        AtomicLong nanos = new AtomicLong();
        GcsTimeEstimator estimator = new GcsTimeEstimator(nanos::get, Duration.ofSeconds(2));
        Instant updated = Instant.parse("2026-01-01T00:00:00Z");
        estimator.observe(updated, 0);
        assertThat(estimator.isProvablyExpired(updated, Duration.ofHours(1))).isFalse(); // a look at a 1 h lock

        nanos.set(Duration.ofSeconds(5).toNanos());
        assertThat(estimator.isProvablyExpired(updated, Duration.ofSeconds(1)))
                .as("a 1 s lock judged on an anchor older than its window (2 s)").isFalse();
        nanos.set(Duration.ofMinutes(61).toNanos());
        assertThat(estimator.isProvablyExpired(updated, Duration.ofHours(1)))
                .as("the 1 h lock keeps the anchors of its own window (2 h)").isTrue();
    }

    /**
     * Item 3, end to end. Interleaving: a contender whose monotonic clock runs 20 % fast inspects one lock held
     * with a 1 h TTL, then waits on a live 0.6 s lock for ten TTLs. Before: its anchor window stayed 2 h and it
     * took over the live lock (overlaps). Now the live lock is judged on a 1.2 s window.
     */
    @Test
    void oneLookAtALongTtlLockDoesNotWidenTheDriftWindowOfAShortOne() throws Exception {
        Duration ttl = Duration.ofMillis(600);
        GcsLockRegistry holder = registry(b -> b.ttl(ttl).refreshInterval(Duration.ofMillis(100))
                .safetyMargin(Duration.ofMillis(300)));
        GcsLockRegistry fast = registry(b -> b.ttl(ttl).refreshInterval(Duration.ofMillis(100))
                .safetyMargin(Duration.ofMillis(300)).ticker(ClockDriftTest.drifting(1.2)));
        GcsLockRegistry longHolder = registry(b -> b.ttl(Duration.ofSeconds(30)).refreshInterval(Duration.ofSeconds(3)));
        Lease hour = longHolder.tryAcquire("hourly", Duration.ofHours(1)).orElseThrow();
        assertThat(fast.inspect("hourly")).isPresent(); // one look at a 1 h lock

        ClockDriftTest.Outcome run = ClockDriftTest.fastContenderAgainstALiveHolder(holder, fast, ttl, "job");
        assertThat(run.history().violations()).as("two healthy holders at once").isEmpty();
        assertThat(run.holderHealthyShare()).as("the holder did hold the lock most of the run").isGreaterThan(0.5);
        hour.release();
    }

    /**
     * Item 4. Interleaving: a one-shot job tries a dead lock (1 s TTL); between its looks (10 s apart on its
     * clock, so no GCS-time anchor of the first look is left) this process lists 4,100 lock objects. Before: the
     * list evicted the dead lock's entry from the 4,096-entry record of versions seen, so each look saw its
     * version "for the first time" and never proved it stale. Now inspection only reads that record.
     */
    @Test
    void aLargeListBetweenLooksDoesNotHideADeadLockFromAOneShotJob() throws Exception {
        AtomicLong ticker = new AtomicLong(1_000_000_000L);
        GcsLockRegistry job = registry(b -> b.ticker(ticker::get));
        // Other locks, written before the dead one (their updated gives no anchor that proves it stale).
        ExecutorService pool = Executors.newFixedThreadPool(8);
        Storage s = storage;
        IntStream.range(0, 4_100).forEach(i -> pool.execute(() -> s.create(
                BlobInfo.newBuilder(BUCKET, "gcslock/other-" + i).setMetadata(Map.of("gcslock-ttl", "3600000")).build(), new byte[0])));
        pool.shutdown();
        assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        plantForeignLock("dead", Duration.ofSeconds(1));

        assertThat(job.tryAcquire("dead")).as("first look: held, as far as it can tell").isEmpty();
        ticker.addAndGet(Duration.ofSeconds(10).toNanos());
        assertThat(job.list()).hasSizeGreaterThan(4_096);
        assertThat(job.tryAcquire("dead")).as("second look, 10 TTLs later, the version unchanged: taken over").isPresent();
    }
}
