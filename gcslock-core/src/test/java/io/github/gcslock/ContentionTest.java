package io.github.gcslock;

import io.github.gcslock.test.LockHistory;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several registries (separate identities, as separate processes) hammer one name with faults on:
 * random latency, lost replies on every operation, 503 bursts. A shared history
 * proves that no two healthy leases overlapped and that fencing tokens only grew.
 */
class ContentionTest extends EmulatorTestBase {

    @Test
    void noTwoHealthyLeasesOverlapUnderFaults() throws Exception {
        long seed = Long.getLong("gcslock.seed", System.nanoTime());
        System.out.println("ContentionTest seed=" + seed + " (replay with -Dgcslock.seed=" + seed + ")");
        Random random = new Random(seed);
        gcs.faults().seed(seed)
                .latency(Duration.ZERO, Duration.ofMillis(4))
                // No write-rate limit here: it would serialise racing creates by itself and hide a missing
                // precondition (ReliabilityTest runs with it).
                .dropReplies(0.05, Operation.INSERT, Operation.PATCH, Operation.DELETE, Operation.GET);
        int registries = 4;
        int threadsEach = 2;
        List<GcsLockRegistry> rs = new ArrayList<>();
        for (int i = 0; i < registries; i++) {
            rs.add(registry(b -> b.ttl(Duration.ofMillis(1500)).refreshInterval(Duration.ofMillis(200))
                    .operationTimeout(Duration.ofMillis(400))));
        }
        LockHistory history = new LockHistory();
        long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
        ExecutorService pool = Executors.newFixedThreadPool(registries * threadsEach);
        List<Future<?>> futures = new ArrayList<>();
        for (GcsLockRegistry r : rs) {
            for (int t = 0; t < threadsEach; t++) {
                long workerSeed = random.nextLong();
                futures.add(pool.submit(() -> {
                    Random rnd = new Random(workerSeed);
                    while (System.nanoTime() < end) {
                        Lease lease;
                        try {
                            lease = r.acquire("hot", Duration.ofMillis(500));
                        } catch (GcsLockException e) { // not acquired in time, or GCS unreachable for a moment
                            continue;
                        }
                        long id = history.acquired("hot", r.owner(), lease.fencingToken());
                        boolean lost = false;
                        for (int step = 0; step < 3; step++) {
                            long t0 = System.nanoTime();
                            if (!lease.isHealthy()) {
                                lost = true;
                                break;
                            }
                            history.healthy(id, t0);
                            history.fencedWrite("hot", lease.fencingToken());
                            Thread.sleep(1 + rnd.nextInt(4));
                        }
                        lease.release();
                        history.ended(id, lost ? "lost" : "released");
                    }
                    return null;
                }));
            }
        }
        // 503 bursts while they run.
        for (int i = 0; i < 6; i++) {
            Thread.sleep(500);
            gcs.faults().failNext(3, 503);
        }
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdownNow();
        System.out.printf("CONTENTION acquisitions=%d overlaps=%d fencing_regressions=%d faults_injected=%d lost_leases=%d%n",
                history.acquisitions(), history.overlaps(), history.fencingRegressions(), gcs.faults().faultsInjected(),
                history.lostLeases());
        assertThat(history.violations()).isEmpty();
        assertThat(history.rejectedWrites()).isZero();
        assertThat(history.acquisitions()).as("the test did exercise the lock").isGreaterThan(20);
        assertThat(gcs.faults().faultsInjected()).isPositive();
    }
}
