package io.github.gcslock.benchmarks;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.GcsEmulator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A cron job of several instances while another process holds its lock, and after that holder crashes:
 * what a one-shot {@code tryAcquire} per tick costs while the lock is held (requests per tick, all
 * followers), and how long after the crash one of them takes the lock over (DESIGN.md rule 16: a one-shot
 * refuses a 412 unread while the object it last read cannot be stale yet, and reads at the first tick after).
 *
 * <p>Each round: a holder acquires and keeps refreshing; {@value #FOLLOWERS} followers (a registry and a
 * counted client each) try once at every tick (every {@code tick}) for {@value #HELD_TICKS} ticks; then the
 * holder's client is partitioned (its requests hang: the crash leaves its object), and the followers go on
 * ticking until one acquires. RTT 30 ms on every request. Run:
 * {@code java -cp gcslock-benchmarks/target/gcslock-benchmarks.jar io.github.gcslock.benchmarks.CronTakeoverBenchmark [rounds]}.
 */
public final class CronTakeoverBenchmark {

    static final Duration TTL = Duration.ofSeconds(8);
    static final Duration TICK = Duration.ofMillis(500);
    static final int FOLLOWERS = 3;
    static final int HELD_TICKS = 40;
    static final long RTT_MS = 30;

    private CronTakeoverBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        List<Double> perTick = new ArrayList<>();
        List<Double> takeover = new ArrayList<>();
        List<Double> afterTtl = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            double[] r = round(round);
            perTick.add(r[0]);
            takeover.add(r[1]);
            afterTtl.add(r[2]);
            System.out.printf(Locale.ROOT, "ROUND cron-takeover round=%d requests_per_tick_held=%.2f takeover_after_crash_s=%.2f "
                    + "takeover_after_last_refresh_minus_ttl_s=%.2f%n", round, r[0], r[1], r[2]);
        }
        Bench.Stats t = Bench.Stats.of(takeover);
        Bench.Stats a = Bench.Stats.of(afterTtl);
        System.out.printf(Locale.ROOT, "RESULT cron-takeover ttl_s=%d tick_ms=%d followers=%d rounds=%d rtt_ms=%d "
                        + "requests_per_tick_held=%.2f takeover_after_crash_s_mean=%.2f takeover_after_crash_s_max=%.2f "
                        + "takeover_past_ttl_s_mean=%.2f takeover_past_ttl_s_max=%.2f%n",
                TTL.toSeconds(), TICK.toMillis(), FOLLOWERS, rounds, RTT_MS,
                perTick.stream().mapToDouble(Double::doubleValue).average().orElse(0), t.mean(), t.max(), a.mean(), a.max());
    }

    /** One round: {requests per tick while held, seconds from crash to takeover, seconds from the holder's last refresh to takeover, minus the TTL}. */
    private static double[] round(int round) throws Exception {
        try (GcsEmulator gcs = Bench.emulator()) {
            gcs.faults().latency(Duration.ofMillis(RTT_MS), Duration.ofMillis(RTT_MS));
            String job = "report-" + round;
            List<GcsLockRegistry> registries = new ArrayList<>();
            try {
                GcsLockRegistry holder = GcsLockRegistry.builder(gcs.storage("holder"), Bench.BUCKET).ttl(TTL)
                        .verifyBucket(false).build();
                registries.add(holder);
                AtomicLong followerRequests = new AtomicLong();
                List<GcsLockRegistry> followers = new ArrayList<>();
                for (int i = 0; i < FOLLOWERS; i++) {
                    GcsLockRegistry f = GcsLockRegistry.builder(Bench.countingStorage(gcs, "f" + i, followerRequests), Bench.BUCKET)
                            .ttl(TTL).verifyBucket(false).build();
                    registries.add(f);
                    followers.add(f);
                }
                Lease held = holder.tryAcquire(job).orElseThrow();
                long next = System.nanoTime();
                long before = followerRequests.get();
                for (int tick = 0; tick < HELD_TICKS; tick++) {
                    next += TICK.toNanos();
                    Bench.sleepUntil(next);
                    for (GcsLockRegistry f : followers) {
                        if (f.tryAcquire(job).isPresent()) {
                            throw new IllegalStateException("a follower acquired a held lock");
                        }
                    }
                }
                double perTick = (double) (followerRequests.get() - before) / HELD_TICKS;
                // Crash: the holder's requests hang from now on; its object stays.
                gcs.faults().client("holder").partition(ClientFaults.Partition.HANG);
                long crashed = System.nanoTime();
                java.time.Instant lastRefresh = held.lastRefreshAt();
                while (true) {
                    next += TICK.toNanos();
                    Bench.sleepUntil(next);
                    for (GcsLockRegistry f : followers) {
                        Optional<Lease> won = f.tryAcquire(job);
                        if (won.isPresent()) {
                            long at = System.nanoTime();
                            double afterCrash = (at - crashed) / 1e9;
                            // The lock object's updated (GCS time) vs the emulator's clock, which is this machine's.
                            double pastTtl = Duration.between(lastRefresh, java.time.Instant.now()).toMillis() / 1e3 - TTL.toSeconds();
                            won.get().release();
                            return new double[] {perTick, afterCrash, pastTtl};
                        }
                    }
                    if (System.nanoTime() - crashed > TTL.multipliedBy(4).toNanos()) {
                        throw new IllegalStateException("nobody took the crashed holder's lock over within 4 TTLs");
                    }
                }
            } finally {
                gcs.faults().reset();
                registries.forEach(GcsLockRegistry::close);
            }
        }
    }
}
