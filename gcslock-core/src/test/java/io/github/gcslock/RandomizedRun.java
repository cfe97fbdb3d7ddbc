package io.github.gcslock;

import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.LockHistory;
import io.github.gcslock.test.Operation;

import java.time.Duration;
import java.util.Random;
import java.util.function.IntSupplier;

/**
 * What the randomized reliability runs ({@link ReliabilityTest}, {@link NemesisReliabilityTest}) share:
 * the seed and size of a run, read from {@code -Dgcslock.seed} and
 * {@code -Dgcslock.reliability.acquisitions} and printed so a failure can be replayed; the emulator-wide
 * faults; and a worker's fenced critical section.
 */
final class RandomizedRun {

    /** The seed every random choice of the run derives from. */
    final long seed;
    /** How many acquisitions the run makes at least. */
    final int target;
    /** The run's random source, seeded with {@link #seed}. */
    final Random random;

    /** Reads the seed and size of the run of {@code test} and prints them with how to replay it. */
    RandomizedRun(String test) {
        this.seed = Long.getLong("gcslock.seed", System.nanoTime());
        this.target = Integer.getInteger("gcslock.reliability.acquisitions", 300);
        System.out.println(test + " seed=" + seed + " acquisitions=" + target + " (replay with -Dgcslock.seed=" + seed + ")");
        this.random = new Random(seed);
    }

    /**
     * The emulator-wide faults of a run: latency up to 3 ms, replies of creates, patches, deletes and
     * reads lost with {@code dropProbability}, all from the run's seed; and GCS's per-object write limit,
     * scaled down to 15 ms (the registries' write-rate window is 20 ms).
     */
    void injectEmulatorFaults(GcsEmulator gcs, double dropProbability) {
        injectEmulatorFaults(gcs, dropProbability, Duration.ZERO, Duration.ofMillis(3));
    }

    /** As {@link #injectEmulatorFaults(GcsEmulator, double)}, with a base latency of every request in {@code [min, max]}. */
    void injectEmulatorFaults(GcsEmulator gcs, double dropProbability, Duration minLatency, Duration maxLatency) {
        gcs.faults().seed(seed)
                .latency(minLatency, maxLatency)
                .dropReplies(dropProbability, Operation.INSERT, Operation.PATCH, Operation.DELETE, Operation.GET);
        gcs.writeRateLimit(Duration.ofMillis(15));
    }

    /** A burst of one to three 503 or 429 answers to whatever requests come next. */
    static void failureBurst(GcsEmulator gcs, Random rnd) {
        gcs.faults().failNext(1 + rnd.nextInt(3), rnd.nextBoolean() ? 503 : 429);
    }

    /** What a worker does before each step of its critical section (a frozen process waits here). */
    interface BeforeStep {
        void run() throws InterruptedException;
    }

    /**
     * A worker's critical section on {@code lease} (recorded in {@code history} as {@code id}): {@code steps}
     * steps, each checking {@code isHealthy()} first, as a fenced write would, then writing to the fenced
     * resource with the lease's token and working for {@code workMillis}. The healthy window is recorded
     * from the time taken just before the check that answered true. Returns whether the lease was found
     * lost (the section then stops at once).
     */
    static boolean fencedSteps(LockHistory history, long id, String name, Lease lease, int steps, BeforeStep beforeStep,
                               IntSupplier workMillis) throws InterruptedException {
        for (int s = 0; s < steps; s++) {
            beforeStep.run();
            long t = System.nanoTime();
            if (!lease.isHealthy()) {
                return true;
            }
            history.healthy(id, t);
            history.fencedWrite(name, lease.fencingToken());
            Thread.sleep(workMillis.getAsInt());
        }
        return false;
    }
}
