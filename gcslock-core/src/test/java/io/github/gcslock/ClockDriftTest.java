package io.github.gcslock;

import io.github.gcslock.test.LockHistory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The monotonic clock drifts too: the GCS-time estimate of a process whose clock runs fast or slow
 * must stay within drift × (a recent window) of GCS time, however long the process runs.
 */
class ClockDriftTest extends EmulatorTestBase {

    /** A monotonic clock that runs at {@code rate} × real time (1.2: 20 % fast). */
    static LongSupplier drifting(double rate) {
        long base = System.nanoTime();
        return () -> base + (long) ((System.nanoTime() - base) * rate);
    }

    /**
     * A contender whose monotonic clock runs 20 % fast waits for ten TTLs on a lock whose holder
     * refreshes normally; it must never take the live lock over.
     *
     * <p>The interleaving this pins (it broke an estimator that kept its best anchor forever):
     * <ol>
     * <li>the contender's first attempt gets 412 and reads the holder's object: anchor
     *     {@code (updated, t0)}, so "GCS time ≥ updated + (now − t0)" on the contender's clock;</li>
     * <li>the contender polls with reads; each shows {@code updated} at most one refresh interval
     *     (100 ms) old, but the old anchor's bound, grown at 1.2 × real time, is higher already, so the
     *     fresh read never replaces it: the overshoot is 0.2 × (time since t0) and keeps growing;</li>
     * <li>after about (TTL − refresh interval) / 0.2 = 2.5 s the bound passes {@code updated + ttl} of
     *     an object refreshed 100 ms ago: the contender deems it stale, its delete guarded by generation
     *     and metageneration succeeds (the object did not change since that read), it creates its own
     *     object, and the holder — healthy on its own correct clock until its next refresh meets a
     *     404 — overlaps with it.</li>
     * </ol>
     * With anchors kept only for two TTLs, the overshoot stays below 0.2 × 2 TTL / 1.2 = 200 ms. The
     * holder's safety margin (300 ms) covers that drift budget: a lock the holder still deems healthy is
     * never older than TTL − margin = 300 ms, and the fast contender deems it stale only past
     * TTL − 200 ms = 400 ms. (On a loaded machine the holder may miss its refreshes and lose the lease by
     * its own deadline; then the contender may take the lock, which is no overlap: the history checks
     * overlaps of healthy leases, sampled every few milliseconds, not the mere takeover.)
     * Time is compressed by the injected ticker and a 600 ms TTL; the run lasts ten real TTLs.
     */
    @Test
    void aContenderWithAFastClockNeverTakesOverALiveLock() throws Exception {
        Duration ttl = Duration.ofMillis(600);
        GcsLockRegistry holder = registry(b -> b.ttl(ttl).refreshInterval(Duration.ofMillis(100))
                .safetyMargin(Duration.ofMillis(300)));
        GcsLockRegistry fast = registry(b -> b.ttl(ttl).refreshInterval(Duration.ofMillis(100))
                .safetyMargin(Duration.ofMillis(300)).ticker(drifting(1.2)));
        Outcome run = fastContenderAgainstALiveHolder(holder, fast, ttl, "job");
        assertThat(run.history().violations()).as("two healthy holders at once").isEmpty();
        assertThat(run.holderHealthyShare()).as("the holder did hold the lock most of the run").isGreaterThan(0.5);
    }

    /** What {@link #fastContenderAgainstALiveHolder} saw. */
    record Outcome(LockHistory history, double holderHealthyShare, int takeovers) {
    }

    /**
     * {@code holder} holds {@code name} (re-acquiring whenever it loses it) while {@code fast} waits for it,
     * for ten TTLs of real time; every healthy moment of both is recorded in a {@link LockHistory}.
     */
    static Outcome fastContenderAgainstALiveHolder(GcsLockRegistry holder, GcsLockRegistry fast, Duration ttl, String name)
            throws Exception {
        LockHistory history = new LockHistory();
        long start = System.nanoTime();
        long end = start + ttl.multipliedBy(10).toNanos();
        AtomicLong holderHealthyNanos = new AtomicLong();
        Thread holderThread = new Thread(() -> {
            while (System.nanoTime() < end) {
                Lease lease;
                try {
                    lease = holder.acquire(name, ttl.multipliedBy(3));
                } catch (GcsLockException e) {
                    continue;
                } catch (InterruptedException e) {
                    return;
                }
                long id = history.acquired(name, holder.owner(), lease.fencingToken());
                long since = System.nanoTime();
                long t0;
                while ((t0 = System.nanoTime()) < end && lease.isHealthy()) {
                    history.healthy(id, t0);
                    sleep(3);
                }
                holderHealthyNanos.addAndGet(t0 - since);
                lease.release();
                history.ended(id, "released");
            }
        });
        holderThread.start();
        sleep(100); // the holder goes first
        int takeovers = 0;
        while (System.nanoTime() < end) {
            // maxWait on the contender's own (fast) clock: 1.2 x the real time left.
            Duration left = Duration.ofNanos((long) ((end - System.nanoTime()) * 1.2));
            Lease lease;
            try {
                lease = fast.acquire(name, left.isNegative() ? Duration.ZERO : left);
            } catch (LockNotAcquiredException e) {
                continue;
            }
            long id = history.acquired(name, fast.owner(), lease.fencingToken());
            long t0 = System.nanoTime();
            if (lease.isHealthy()) {
                history.healthy(id, t0);
            }
            takeovers++;
            lease.release();
            history.ended(id, "released");
        }
        holderThread.join();
        double share = (double) holderHealthyNanos.get() / (end - start);
        System.out.printf("CLOCK-DRIFT contender_acquisitions=%d holder_healthy=%d%% overlaps=%d%n", takeovers,
                Math.round(100 * share), history.overlaps());
        return new Outcome(history, share, takeovers);
    }

    /** The other direction costs only liveness, and boundedly: a 20 % slow clock still takes a dead lock over. */
    @ParameterizedTest(name = "rate {0}")
    @ValueSource(doubles = {0.8, 1.2})
    void aContenderWithADriftingClockStillTakesOverADeadLock(double rate) throws Exception {
        GcsLockRegistry contender = registry(b -> b.ticker(drifting(rate)));
        plantForeignLock("job", Duration.ofMillis(400));
        Lease lease = contender.acquire("job", Duration.ofSeconds(10));
        assertThat(lease.isHealthy()).isTrue();
    }

    /** The estimator alone, on a fake clock: the error of a 20 % fast clock stays within 0.2 × window. */
    @Test
    void theEstimatesErrorStaysBoundedOnAFastClock() {
        AtomicLong realNanos = new AtomicLong();
        LongSupplier fastTicker = () -> (long) (realNanos.get() * 1.2);
        Duration window = Duration.ofSeconds(2);
        GcsTimeEstimator estimator = new GcsTimeEstimator(fastTicker, window);
        Instant gcsEpoch = Instant.parse("2026-01-01T00:00:00Z");
        long maxOvershootMillis = 0;
        for (int step = 0; step < 100_000; step++) { // 10,000 s of real time, a read every 100 ms
            realNanos.addAndGet(Duration.ofMillis(100).toNanos());
            Instant gcsNow = gcsEpoch.plusNanos(realNanos.get());
            // Every reply shows an object written up to 100 ms before (a holder refreshing every 100 ms).
            estimator.observe(gcsNow.minusMillis(step % 2 == 0 ? 0 : 100), fastTicker.getAsLong());
            long overshoot = Duration.between(gcsNow, estimator.lowerBoundNow()).toMillis();
            maxOvershootMillis = Math.max(maxOvershootMillis, overshoot);
        }
        assertThat(maxOvershootMillis).as("error of the GCS-time estimate, ms").isLessThanOrEqualTo((long) (0.2 * window.toMillis()));
    }

    /** Without replies for a whole window there is no estimate, hence nothing is judged stale on it. */
    @Test
    void anEstimateWithoutRecentRepliesIsNoEstimate() {
        AtomicLong nanos = new AtomicLong();
        GcsTimeEstimator estimator = new GcsTimeEstimator(nanos::get, Duration.ofSeconds(2));
        Instant updated = Instant.parse("2026-01-01T00:00:00Z");
        estimator.observe(updated, 0);
        nanos.set(Duration.ofMillis(1500).toNanos());
        assertThat(estimator.isProvablyExpired(updated, Duration.ofSeconds(1))).isTrue();
        nanos.set(Duration.ofSeconds(5).toNanos());
        assertThat(estimator.lowerBoundNow()).isNull();
        assertThat(estimator.isProvablyExpired(updated, Duration.ofSeconds(1))).isFalse();
    }
}
