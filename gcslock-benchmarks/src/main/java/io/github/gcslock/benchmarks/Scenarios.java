package io.github.gcslock.benchmarks;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.test.GcsEmulator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The benchmark scenarios. Each prints {@code RESULT <scenario> <metric>=<value> ...} lines. */
final class Scenarios {

    static final String BUCKET = "bench";

    private final boolean quick;
    private final List<String> results = new ArrayList<>();
    /** contenders → system → handoff p50 (ms), for the plot. */
    final Map<Integer, Map<String, Double>> handoffP50 = new ConcurrentHashMap<>();

    Scenarios(boolean quick) {
        this.quick = quick;
    }

    List<String> results() {
        return results;
    }

    void result(String line) {
        String l = "RESULT " + line;
        results.add(l);
        System.out.println(l);
    }

    /** The same bounded client for every system: the client's own 50 s retries would blur every figure. */
    static Storage boundedStorage(GcsEmulator gcs) {
        return gcs.storage(RetrySettings.newBuilder().setMaxAttempts(50)
                .setInitialRetryDelayDuration(Duration.ofMillis(50)).setMaxRetryDelayDuration(Duration.ofMillis(500))
                .setRetryDelayMultiplier(2).setTotalTimeoutDuration(Duration.ofSeconds(10)).build());
    }

    static GcsEmulator emulator() {
        GcsEmulator gcs = GcsEmulator.start();
        gcs.createBucket(BUCKET);
        return gcs;
    }

    // ------------------------------------------------------------------ uncontended

    void uncontended() throws Exception {
        long rttMs = 50;
        int n = quick ? 15 : 60;
        try (GcsEmulator gcs = emulator()) {
            gcs.faults().latency(Duration.ofMillis(rttMs), Duration.ofMillis(rttMs));
            Storage storage = boundedStorage(gcs);
            GcsLockRegistry ours = GcsLockRegistry.builder(storage, BUCKET).verifyBucket(false).build();
            BaselineLock naive = new NaiveGcsLock(storage, BUCKET);
            BaselineLock shed = new ShedLockStyleGcsLock(storage, BUCKET, Duration.ofMinutes(5));
            double[] oursR = measureUncontended(gcs, n, i -> ours.acquire("u" + i, Duration.ZERO).release());
            double[] naiveR = measureUncontended(gcs, n, i -> {
                naive.tryLock("u" + i);
                naive.unlock("u" + i);
            });
            double[] shedR = measureUncontended(gcs, n, i -> {
                shed.tryLock("u" + i);
                shed.unlock("u" + i);
            });
            ours.close();
            result(String.format("uncontended rtt_ms=%d ours_requests=%.2f ours_latency_ms=%.1f ours_latency_over_2rtt=%.3f "
                            + "naive_requests=%.2f naive_latency_ms=%.1f shedlock_requests=%.2f shedlock_latency_ms=%.1f",
                    rttMs, oursR[0], oursR[1], oursR[1] / (2.0 * rttMs), naiveR[0], naiveR[1], shedR[0], shedR[1]));
        }
    }

    interface Op {
        void run(int i) throws Exception;
    }

    /** Returns {requests per op, median latency ms}. */
    private static double[] measureUncontended(GcsEmulator gcs, int n, Op op) throws Exception {
        op.run(-1); // warm-up (connection, JIT)
        gcs.faults().resetCounters();
        double[] lat = new double[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            op.run(i);
            lat[i] = (System.nanoTime() - t0) / 1e6;
        }
        return new double[]{(double) gcs.faults().objectRequests() / n, percentile(lat, 50)};
    }

    // ------------------------------------------------------------------ contention

    /** One system under contention: how it acquires (waiting until the deadline) and releases. */
    interface Contender {
        /** Waits for the lock until {@code deadlineNanos}; returns a release action, or null if the time ran out. */
        Runnable acquire(long deadlineNanos) throws Exception;
    }

    void contention() throws Exception {
        int[] counts = {2, 8, 32};
        Duration run = quick ? Duration.ofSeconds(10) : Duration.ofSeconds(60);
        for (int c : counts) {
            for (String system : List.of("ours", "naive", "shedlock")) {
                contentionRun(system, c, run);
            }
        }
    }

    private void contentionRun(String system, int contenders, Duration run) throws Exception {
        try (GcsEmulator gcs = emulator()) {
            gcs.faults().latency(Duration.ofMillis(5), Duration.ofMillis(5));
            gcs.writeRateLimit(true);
            List<Contender> cs = new ArrayList<>();
            List<GcsLockRegistry> registries = new ArrayList<>();
            for (int i = 0; i < contenders; i++) {
                Storage storage = boundedStorage(gcs);
                switch (system) {
                    case "ours" -> {
                        GcsLockRegistry r = GcsLockRegistry.builder(storage, BUCKET).verifyBucket(false)
                                .ttl(Duration.ofSeconds(30)).refreshInterval(Duration.ofSeconds(5))
                                .backoff(Duration.ofMillis(100), Duration.ofSeconds(2), 2).build();
                        registries.add(r);
                        cs.add(deadline -> {
                            long wait = deadline - System.nanoTime();
                            if (wait <= 0) {
                                return null;
                            }
                            try {
                                Lease l = r.acquire("hot", Duration.ofNanos(wait));
                                return l::release;
                            } catch (GcsLockException e) {
                                return null;
                            }
                        });
                    }
                    case "naive" -> {
                        NaiveGcsLock lock = new NaiveGcsLock(storage, BUCKET);
                        cs.add(deadline -> {
                            for (int attempt = 0; System.nanoTime() < deadline; attempt++) {
                                if (lock.tryLock("hot")) {
                                    return () -> lock.unlock("hot");
                                }
                                long sleep = Math.min(NaiveGcsLock.backoffMillis(100, attempt),
                                        TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                                if (sleep > 0) {
                                    Thread.sleep(sleep);
                                }
                            }
                            return null;
                        });
                    }
                    default -> {
                        ShedLockStyleGcsLock lock = new ShedLockStyleGcsLock(storage, BUCKET, Duration.ofMinutes(5));
                        cs.add(deadline -> {
                            // ShedLock itself never waits; polled here with the same capped jittered backoff as ours.
                            for (int attempt = 0; System.nanoTime() < deadline; attempt++) {
                                if (lock.tryLock("hot")) {
                                    return () -> lock.unlock("hot");
                                }
                                long cap = Math.min(1000, 100L << Math.min(attempt, 10));
                                long sleep = Math.min(ThreadLocalRandom.current().nextLong(cap + 1),
                                        TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                                if (sleep > 0) {
                                    Thread.sleep(sleep);
                                }
                            }
                            return null;
                        });
                    }
                }
            }
            gcs.faults().resetCounters();
            long deadline = System.nanoTime() + run.toNanos();
            long[] perContender = new long[contenders];
            List<long[]> events = Collections.synchronizedList(new ArrayList<>()); // {acquiredAt, releasedAt}
            ExecutorService pool = Executors.newFixedThreadPool(contenders);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < contenders; i++) {
                int idx = i;
                fs.add(pool.submit(() -> {
                    go.await();
                    while (System.nanoTime() < deadline) {
                        Runnable release = cs.get(idx).acquire(deadline);
                        if (release == null) {
                            break;
                        }
                        long acquiredAt = System.nanoTime();
                        Thread.sleep(5); // the critical section
                        release.run();
                        long releasedAt = System.nanoTime(); // handoff gap: release completed -> next acquired
                        perContender[idx]++;
                        events.add(new long[]{acquiredAt, releasedAt});
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : fs) {
                f.get(5, TimeUnit.MINUTES);
            }
            pool.shutdownNow();
            registries.forEach(GcsLockRegistry::close);
            long acquisitions = Arrays.stream(perContender).sum();
            List<long[]> sorted = new ArrayList<>(events);
            sorted.sort((a, b) -> Long.compare(a[0], b[0]));
            double[] gaps = new double[Math.max(0, sorted.size() - 1)];
            for (int i = 1; i < sorted.size(); i++) {
                gaps[i - 1] = (sorted.get(i)[0] - sorted.get(i - 1)[1]) / 1e6;
            }
            long max = Arrays.stream(perContender).max().orElse(0);
            long min = Arrays.stream(perContender).min().orElse(0);
            double p50 = percentile(gaps, 50);
            handoffP50.computeIfAbsent(contenders, k -> new ConcurrentHashMap<>()).put(system, p50);
            result(String.format("contention system=%s contenders=%d acquisitions=%d requests_per_acquisition=%.1f "
                            + "handoff_p50_ms=%.0f handoff_p99_ms=%.0f fairness_max=%d fairness_min=%d rate_limited_429=%d",
                    system, contenders, acquisitions, acquisitions == 0 ? Double.NaN : (double) gcs.faults().objectRequests() / acquisitions,
                    p50, percentile(gaps, 99), max, min, gcs.faults().rateLimited()));
        }
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

    static double percentile(double[] values, double p) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int idx = (int) Math.ceil(p / 100.0 * v.length) - 1;
        return v[Math.max(0, Math.min(v.length - 1, idx))];
    }
}
