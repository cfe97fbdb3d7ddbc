package io.github.gcslock.benchmarks;

import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.test.GcsEmulator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scenarios of one lock's cost: uncontended, in-process contention and many held leases. Each prints
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

    // ------------------------------------------------------------------ held-scale

    void heldScale() throws Exception {
        for (int n : new int[]{1_000, 10_000}) {
            heldScaleRun(n);
        }
    }

    private void heldScaleRun(int n) throws Exception {
        Duration interval = Duration.ofSeconds(5);
        int intervals = quick ? 2 : 5;
        // The emulator runs in its own JVM here, so that its heap and threads do not count as ours.
        try (ExternalEmulator gcs = ExternalEmulator.start(BUCKET)) {
            Map<String, Long> lastRefresh = new ConcurrentHashMap<>();
            List<Double> lags = Collections.synchronizedList(new ArrayList<>());
            AtomicLong refreshRequests = new AtomicLong();
            GcsLockRegistry r = GcsLockRegistry.builder(gcs.storage(), BUCKET).verifyBucket(false)
                    .ttl(Duration.ofSeconds(40)).refreshInterval(interval).refresherThreads(4)
                    .listener(new LockEventListener() {
                        @Override
                        public void refreshed(Lease lease) {
                            refreshRequests.incrementAndGet();
                            long now = System.nanoTime();
                            Long prev = lastRefresh.put(lease.leaseId(), now);
                            if (prev != null) {
                                lags.add((now - prev - interval.toNanos()) / 1e6);
                            }
                        }

                        @Override
                        public void refreshFailed(Lease lease, Exception error) {
                            refreshRequests.incrementAndGet();
                        }

                    }).build();
            r.tryAcquire("warm-up").orElseThrow().release(); // client, connections, classes: not per lease
            System.gc();
            long heapBefore = usedHeap();
            List<Lease> leases = Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int start = t;
                fs.add(pool.submit(() -> {
                    for (int i = start; i < n; i += 8) {
                        Optional<Lease> l = r.tryAcquire("held-" + i);
                        l.ifPresent(leases::add);
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(10, TimeUnit.MINUTES);
            }
            pool.shutdownNow();
            System.gc();
            long heapAfter = usedHeap();
            refreshRequests.set(0);
            lags.clear();
            Thread.sleep(interval.multipliedBy(intervals).toMillis());
            long refreshes = refreshRequests.get();
            int refresherThreads = r.refresherThreads();
            long healthy = leases.stream().filter(Lease::isHealthy).count();
            r.close();
            double[] lagArr = lags.stream().mapToDouble(Double::doubleValue).toArray();
            result(String.format("held-scale leases=%d refresh_requests_per_interval=%.0f refresher_threads=%d "
                            + "heap_bytes_per_lease=%d refresh_lag_p99_ms=%.0f healthy_at_end=%d",
                    n, (double) refreshes / intervals, refresherThreads, (heapAfter - heapBefore) / Math.max(1, leases.size()),
                    percentile(lagArr, 99), healthy));
        }
    }

    private static long usedHeap() {
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }
}
