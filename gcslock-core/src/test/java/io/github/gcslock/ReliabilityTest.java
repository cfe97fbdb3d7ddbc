package io.github.gcslock;

import io.github.gcslock.test.LockHistory;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Randomized mutual-exclusion run: K registries (separate identities, each with its own clock skew
 * of up to ±2 minutes) × M acquisitions on a few names, against an emulator with random latency,
 * lost replies on create/patch/delete/get, 429/503 bursts, a write-rate limit and a clock offset.
 * The seed is printed so a failure can be replayed with {@code -Dgcslock.seed=...}.
 * Short by default; {@code -Dgcslock.reliability.acquisitions=10000} runs the long form.
 */
class ReliabilityTest extends EmulatorTestBase {

    @Test
    void randomizedFaultsNeverProduceTwoHealthyHoldersOrAFencingRegression() throws Exception {
        RandomizedRun run = new RandomizedRun("ReliabilityTest");
        long seed = run.seed;
        int target = run.target;
        Random random = run.random;
        run.injectEmulatorFaults(gcs, 0.03);
        gcs.clockOffset(Duration.ofSeconds(random.nextInt(241) - 120));

        int registries = 5;
        int threadsEach = 2;
        String[] names = {"alpha", "beta", "gamma"};
        List<GcsLockRegistry> rs = new ArrayList<>();
        for (int i = 0; i < registries; i++) {
            Duration skew = Duration.ofSeconds(random.nextInt(241) - 120);
            rs.add(registry(b -> b.ttl(Duration.ofMillis(1500)).refreshInterval(Duration.ofMillis(200))
                    .operationTimeout(Duration.ofMillis(400)).clock(Clock.offset(Clock.systemUTC(), skew))));
        }
        LockHistory history = new LockHistory();
        AtomicLong acquisitions = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(registries * threadsEach + 1);
        List<Future<?>> workers = new ArrayList<>();
        for (GcsLockRegistry r : rs) {
            for (int t = 0; t < threadsEach; t++) {
                long workerSeed = random.nextLong();
                workers.add(pool.submit(() -> {
                    Random rnd = new Random(workerSeed);
                    while (!stop.get() && acquisitions.get() < target) {
                        String name = names[rnd.nextInt(names.length)];
                        Lease lease;
                        try {
                            if (rnd.nextBoolean()) {
                                Optional<Lease> l = r.tryAcquire(name);
                                if (l.isEmpty()) {
                                    Thread.sleep(rnd.nextInt(5));
                                    continue;
                                }
                                lease = l.get();
                            } else {
                                lease = r.acquire(name, Duration.ofMillis(300));
                            }
                        } catch (GcsLockException e) {
                            continue; // timed out, or GCS unreachable for a moment: nothing decided
                        }
                        acquisitions.incrementAndGet();
                        long id = history.acquired(name, r.owner(), lease.fencingToken());
                        boolean lost = RandomizedRun.fencedSteps(history, id, name, lease, 1 + rnd.nextInt(3), () -> { },
                                () -> rnd.nextInt(4));
                        lease.release();
                        history.ended(id, lost ? "lost" : "released");
                    }
                    return null;
                }));
            }
        }
        // 429/503 bursts while the workers run.
        Future<?> bursts = pool.submit(() -> {
            Random rnd = new Random(seed ^ 0x5DEECE66DL);
            while (!stop.get() && acquisitions.get() < target) {
                Thread.sleep(200 + rnd.nextInt(200));
                RandomizedRun.failureBurst(gcs, rnd);
            }
            return null;
        });
        try {
            for (Future<?> f : workers) {
                f.get(30, TimeUnit.MINUTES);
            }
        } finally {
            stop.set(true);
            bursts.get(10, TimeUnit.SECONDS);
            pool.shutdownNow();
        }
        System.out.printf("RELIABILITY-BASIC acquisitions=%d overlaps=%d fencing_regressions=%d faults_injected=%d lost_leases=%d%n",
                history.acquisitions(), history.overlaps(), history.fencingRegressions(), gcs.faults().faultsInjected(),
                history.lostLeases());
        assertThat(history.violations()).isEmpty();
        assertThat(history.rejectedWrites()).as("no healthy holder wrote with an older token").isZero();
        assertThat(history.acquisitions()).isGreaterThanOrEqualTo(target);
        assertThat(gcs.faults().faultsInjected()).isPositive();
    }
}
