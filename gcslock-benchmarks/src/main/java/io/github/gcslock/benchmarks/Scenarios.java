package io.github.gcslock.benchmarks;

import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.test.GcsEmulator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scenarios of one lock's cost: uncontended and in-process contention (many held leases: {@link HeldScaleScenario}). Each prints
 * {@code RESULT <scenario> <metric>=<value> ...} lines. The multi-process scenarios have classes of their own.
 */
final class Scenarios {

    private static final String BUCKET = Bench.BUCKET;

    private final boolean quick;
    private final Bench.Results results;

    Scenarios(Bench.Results results, boolean quick) {
        this.results = results;
        this.quick = quick;
    }

    private void result(String line) {
        results.add(line);
    }

    private static Storage boundedStorage(GcsEmulator gcs) {
        return Bench.boundedStorage(gcs);
    }

    private static GcsEmulator emulator() {
        return Bench.emulator();
    }

    private static double percentile(double[] values, double p) {
        return Bench.percentile(values, p);
    }

    // ------------------------------------------------------------------ uncontended

    void uncontended() throws Exception {
        long rttMs = 50;
        int n = quick ? 30 : 100;
        try (GcsEmulator gcs = emulator()) {
            gcs.faults().latency(Duration.ofMillis(rttMs), Duration.ofMillis(rttMs));
            Storage storage = boundedStorage(gcs);
            GcsLockRegistry ours = GcsLockRegistry.builder(storage, BUCKET).verifyBucket(false).build();
            BaselineLock naive = new NaiveGcsLock(storage, BUCKET);
            BaselineLock shed = new ShedLockStyleGcsLock(storage, BUCKET, Duration.ofMinutes(5));
            List<Op> ops = List.of(
                    i -> ours.acquire("u" + i, Duration.ZERO).release(),
                    i -> {
                        naive.tryLock("u" + i);
                        naive.unlock("u" + i);
                    },
                    i -> {
                        shed.tryLock("u" + i);
                        shed.unlock("u" + i);
                    });
            double[][] r = measureUncontended(gcs, n, ops);
            ours.close();
            // The engine's own overhead: ours against the naive lock making the same two calls through the
            // same client (not against 2 RTT, which leaves out the client library's own cost per request).
            result(String.format("uncontended rtt_ms=%d n=%d ours_requests=%.2f ours_latency_ms=%.1f naive_requests=%.2f "
                            + "naive_latency_ms=%.1f ours_latency_over_naive=%.3f shedlock_requests=%.2f shedlock_latency_ms=%.1f",
                    rttMs, n, r[0][0], r[0][1], r[1][0], r[1][1], r[0][1] / r[1][1], r[2][0], r[2][1]));
        }
    }

    interface Op {
        void run(int i) throws Exception;
    }

    /**
     * Runs the systems' ops in turn, {@code n} rounds, so that a burst of load on this shared machine hits
     * them alike. Returns, per op, {requests per op, median latency ms}.
     */
    private static double[][] measureUncontended(GcsEmulator gcs, int n, List<Op> ops) throws Exception {
        for (Op op : ops) {
            op.run(-1); // warm-up (connection, JIT)
        }
        double[][] lat = new double[ops.size()][n];
        long[] requests = new long[ops.size()];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < ops.size(); k++) {
                long before = gcs.faults().objectRequests();
                long t0 = System.nanoTime();
                ops.get(k).run(i);
                lat[k][i] = (System.nanoTime() - t0) / 1e6;
                requests[k] += gcs.faults().objectRequests() - before;
            }
        }
        double[][] r = new double[ops.size()][];
        for (int k = 0; k < ops.size(); k++) {
            r[k] = new double[]{(double) requests[k] / n, percentile(lat[k], 50)};
        }
        return r;
    }

    // ------------------------------------------------------------------ in-process

    void inProcess() throws Exception {
        int threads = 8;
        Duration run = quick ? Duration.ofSeconds(3) : Duration.ofSeconds(15);
        try (GcsEmulator gcs = emulator()) {
            gcs.faults().latency(Duration.ofMillis(2), Duration.ofMillis(2));
            GcsLockRegistry r = GcsLockRegistry.builder(boundedStorage(gcs), BUCKET).verifyBucket(false)
                    .backoff(Duration.ofMillis(50), Duration.ofSeconds(1), 2).build();
            gcs.faults().resetCounters();
            long deadline = System.nanoTime() + run.toNanos();
            AtomicLong acquisitions = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                fs.add(pool.submit(() -> {
                    while (System.nanoTime() < deadline) {
                        try (Lease l = r.acquire("shared", Duration.ofSeconds(30))) {
                            acquisitions.incrementAndGet();
                            Thread.sleep(1);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(2, TimeUnit.MINUTES);
            }
            pool.shutdownNow();
            r.close();
            result(String.format("in-process threads=%d acquisitions=%d requests_per_acquisition=%.2f",
                    threads, acquisitions.get(), (double) gcs.faults().objectRequests() / acquisitions.get()));
        }
    }
}
