package io.github.gcslock.benchmarks;

import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockLostException;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Many leases held by one registry at a realistic reply time: does every lease get its refresh once per
 * interval, on time, and none lost? Prints per configuration
 * <pre>
 * RESULT held-scale leases=N rtt_ms=.. ttl_s=.. interval_s=.. refreshes_per_interval=.. refreshes_per_interval_over_n=..
 *        refresh_lag_p50_ms=.. refresh_lag_p99_ms=.. refresh_lag_max_ms=.. lag_p99_over_interval=.. lost=..
 *        threads_peak=.. refresh_threads_peak=.. heap_bytes_per_lease=.. usd_per_month=..
 * </pre>
 * <b>Refresh lag</b> of a lease's k-th refresh after its first one in the run: when its confirmation arrived
 * minus (the first one's + k refresh intervals). A schedule that runs at the interval keeps it near 0
 * whatever the reply time; one that waits a full interval after each reply (and after queueing for a
 * thread) adds the reply time and the queueing at every period. Goals: refreshes per interval N ± 2 %,
 * lag p99 ≤ 10 % of the interval, 0 leases lost.
 *
 * <p>The head-of-line configuration holds a few leases whose PATCH replies come later than the operation
 * timeout (held back in the emulator, then committed) among normal ones, and reports the normal leases'
 * lag: a slow lease must not delay another lease's refresh by more than its own reply time.
 */
final class HeldScaleScenario {

    /** One configuration. {@code ttl} null: the registry's default TTL (5 min, refresh every 37 s). */
    record Config(String label, int leases, long rttMinMs, long rttMaxMs, Duration ttl, int slowLeases,
            Duration slowReply, int intervalsMeasured) {

        static Config defaults(int leases, long rttMinMs, long rttMaxMs, int intervals) {
            return new Config("held-scale", leases, rttMinMs, rttMaxMs, null, 0, Duration.ZERO, intervals);
        }
    }

    private static final String BUCKET = Bench.BUCKET;

    private final Bench.Results results;

    HeldScaleScenario(Bench.Results results) {
        this.results = results;
    }

    /** The configurations of a run: 1,000 and 10,000 leases at 50 ms (10,000 also at 50–150 ms), 100,000 in the full run. */
    static List<Config> configs(boolean quick) {
        String only = System.getProperty("gcslock.benchmarks.heldScaleLeases");
        if (only != null) { // e.g. -Dgcslock.benchmarks.heldScaleLeases=100000: that many at 50 ms, nothing else
            List<Config> c = new ArrayList<>();
            for (String n : only.split(",")) {
                c.add(Config.defaults(Integer.parseInt(n.trim()), 50, 50, quick ? 2 : 7));
            }
            return c;
        }
        // --quick: one interval for the schedule's phase, then two measured (~2 min per configuration); the full
        // run measures seven, so that the run outlasts a lease's deadline (TTL - safety margin = 240 s) and a
        // lease that is not refreshed in time shows up as lost.
        int measured = quick ? 2 : 7;
        List<Config> c = new ArrayList<>();
        c.add(Config.defaults(1_000, 50, 50, measured));
        c.add(Config.defaults(10_000, 50, 50, measured));
        c.add(Config.defaults(10_000, 50, 150, measured));
        if (!quick) {
            c.add(Config.defaults(100_000, 50, 50, 3));
        }
        // Time-compressed so that the run outlasts the deadline (TTL 30 s - safety margin 6 s = 24 s): refresh
        // every 3 s, operation timeout 10 s, and 4 leases whose every PATCH is answered after 12 s.
        c.add(new Config("held-scale-head-of-line", 200, 50, 50, Duration.ofSeconds(30), 4, Duration.ofSeconds(12),
                quick ? 9 : 20));
        // The same without slow leases: the lag this machine adds by itself, to compare the one above with.
        c.add(new Config("held-scale-head-of-line-control", 200, 50, 50, Duration.ofSeconds(30), 0, Duration.ZERO,
                quick ? 9 : 20));
        return c;
    }

    void run(List<Config> configs) throws Exception {
        for (Config c : configs) {
            run(c);
        }
    }

    void run(Config c) throws Exception {
        if (c.label().startsWith("held-scale-head-of-line")) {
            // In this JVM: the fault hook holds one object's PATCH back. Heap and threads are not reported.
            try (GcsEmulator gcs = Bench.emulator()) {
                gcs.faults().latency(Duration.ofMillis(c.rttMinMs()), Duration.ofMillis(c.rttMaxMs()));
                for (int i = 0; i < c.slowLeases(); i++) {
                    slowEveryPatch(gcs, "gcslock/slow-" + i, c.slowReply());
                }
                measure(c, Bench.boundedStorage(gcs));
                gcs.faults().reset();
            }
        } else {
            // The emulator runs in its own JVM, so that its heap and threads do not count as ours.
            try (ExternalEmulator gcs = ExternalEmulator.start(BUCKET, c.rttMinMs(), c.rttMaxMs())) {
                measure(c, gcs.storage());
            }
        }
    }

    /** Holds back every PATCH of {@code object} for {@code delay} before it is processed (it then commits). */
    private static void slowEveryPatch(GcsEmulator gcs, String object, Duration delay) {
        gcs.faults().beforeNext(Operation.PATCH, object, new Runnable() {
            @Override
            public void run() {
                gcs.faults().beforeNext(Operation.PATCH, object, this); // the next one too
                try {
                    Thread.sleep(delay.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    private void measure(Config c, Storage storage) throws Exception {
        Map<String, List<Long>> confirmations = new ConcurrentHashMap<>();
        AtomicLong refreshAttempts = new AtomicLong();
        AtomicInteger lostCallbacks = new AtomicInteger();
        Set<String> slowIds = ConcurrentHashMap.newKeySet();
        GcsLockRegistry.Builder b = GcsLockRegistry.builder(storage, BUCKET).verifyBucket(false)
                .listener(new LockEventListener() {
                    @Override
                    public void refreshed(Lease lease) {
                        refreshAttempts.incrementAndGet();
                        confirmations.computeIfAbsent(lease.leaseId(), k -> Collections.synchronizedList(new ArrayList<>()))
                                .add(System.nanoTime());
                    }

                    @Override
                    public void refreshFailed(Lease lease, Exception error) {
                        refreshAttempts.incrementAndGet();
                    }

                    @Override
                    public void lost(Lease lease, LockLostException reason) {
                        if (!slowIds.contains(lease.leaseId())) {
                            lostCallbacks.incrementAndGet();
                        }
                    }
                });
        if (c.ttl() != null) {
            b.ttl(c.ttl());
            if (c.ttl().compareTo(Duration.ofSeconds(4)) < 0) {
                // A smoke test's time-compressed TTL: too short for GCS's 1 s write window (DESIGN.md rule 21 refuses
                // it at build); this emulator has no write limit, so the window is scaled down with the TTL.
                b.writeRateWindow(Duration.ofMillis(20));
            }
        }
        GcsLockRegistry r = b.build();
        Duration interval = r.refreshInterval();
        r.tryAcquire("warm-up").orElseThrow().release(); // client, connections, classes: not per lease
        System.gc();
        long heapBefore = usedHeap();
        List<Lease> leases = Collections.synchronizedList(new ArrayList<>());
        List<Lease> slow = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < c.slowLeases(); i++) {
            Lease l = r.tryAcquire("slow-" + i).orElseThrow();
            slow.add(l);
            slowIds.add(l.leaseId());
        }
        long acquireStart = System.nanoTime();
        acquireAll(c.leases(), 64, name -> r.tryAcquire(name).ifPresent(leases::add));
        double acquireSeconds = (System.nanoTime() - acquireStart) / 1e9;
        System.gc();
        long heapAfter = usedHeap();

        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        threads.resetPeakThreadCount();
        AtomicInteger refreshThreadsPeak = new AtomicInteger();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        sampler.scheduleAtFixedRate(() -> refreshThreadsPeak.accumulateAndGet(refreshThreads(threads), Math::max),
                0, 500, TimeUnit.MILLISECONDS);
        // One interval for every lease's first refresh (the schedule's phase), then the measured intervals.
        Thread.sleep(interval.toMillis());
        long countStart = refreshAttempts.get();
        long measureStart = System.nanoTime();
        Thread.sleep(interval.multipliedBy(c.intervalsMeasured()).toMillis());
        long counted = refreshAttempts.get() - countStart;
        double measuredIntervals = (System.nanoTime() - measureStart) / (double) interval.toNanos();
        long measureEnd = System.nanoTime();
        sampler.shutdownNow();
        int threadsPeak = threads.getPeakThreadCount();
        long unhealthy = leases.stream().filter(l -> !l.isHealthy()).count();
        long slowHealthy = slow.stream().filter(Lease::isHealthy).count();
        int lostInRun = lostCallbacks.get();

        List<Double> lags = new ArrayList<>();
        int unrefreshed = 0;
        for (Lease l : leases) {
            List<Long> times = confirmations.get(l.leaseId());
            if (times == null) {
                unrefreshed++;
                continue;
            }
            synchronized (times) {
                for (int k = 1; k < times.size() && times.get(k) <= measureEnd; k++) {
                    lags.add((times.get(k) - times.get(0) - k * interval.toNanos()) / 1e6);
                }
            }
        }
        // Releasing 10,000 leases one by one at 50 ms each would take minutes: release them side by side.
        List<Lease> all = new ArrayList<>(leases);
        all.addAll(slow);
        acquireAll(all.size(), 64, name -> {
            try {
                all.get(Integer.parseInt(name.substring("held-".length()))).release();
            } catch (RuntimeException e) {
                // a lost lease, or GCS refusing: close() below tries again
            }
        });
        r.close();

        Bench.Stats lag = Bench.Stats.of(lags);
        int n = c.leases() + c.slowLeases();
        double perInterval = counted / measuredIntervals;
        long lost = Math.max(unhealthy, lostInRun);
        String rtt = c.rttMinMs() == c.rttMaxMs() ? Long.toString(c.rttMinMs()) : c.rttMinMs() + "-" + c.rttMaxMs();
        StringBuilder line = new StringBuilder(String.format(
                "%s leases=%d rtt_ms=%s ttl_s=%s interval_s=%s refreshes_per_interval=%.0f refreshes_per_interval_over_n=%.3f "
                        + "refresh_lag_n=%d refresh_lag_p50_ms=%.0f refresh_lag_p99_ms=%.0f refresh_lag_max_ms=%.0f "
                        + "lag_p99_over_interval=%.4f never_refreshed=%d lost=%d",
                c.label(), c.leases(), rtt, seconds(r.ttl()), seconds(interval), perInterval, perInterval / n,
                lag.n(), lag.p50(), lag.p99(), lag.max(), lag.p99() / interval.toMillis(), unrefreshed, lost));
        if (c.label().startsWith("held-scale-head-of-line")) {
            line.append(String.format(" slow_leases=%d slow_reply_s=%s slow_healthy_at_end=%d lag_max_over_rtt=%.2f",
                    c.slowLeases(), seconds(c.slowReply()), slowHealthy, lag.max() / c.rttMaxMs()));
        } else {
            line.append(String.format(" threads_peak=%d refresh_threads_peak=%d heap_bytes_per_lease=%d acquire_s=%.0f",
                    threadsPeak, refreshThreadsPeak.get(), (heapAfter - heapBefore) / Math.max(1, leases.size()),
                    acquireSeconds));
        }
        line.append(String.format(" usd_per_month=%.2f", Pricing.heldLeasesPerMonth(n, interval)));
        results.add(line.toString());
    }

    /** Runs {@code action} for {@code held-0 … held-(n-1)} on {@code threads} threads. */
    private static void acquireAll(int n, int threads, Consumer<String> acquire) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int start = t;
            fs.add(pool.submit(() -> {
                for (int i = start; i < n; i += threads) {
                    acquire.accept("held-" + i);
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(30, TimeUnit.MINUTES);
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** Live threads that refresh leases (the engine names them {@code gcslock-refresh-…}). */
    private static int refreshThreads(ThreadMXBean threads) {
        int count = 0;
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("gcslock-refresh")) {
                count++;
            }
        }
        return count;
    }

    /** Whole seconds as such (37), shorter spans with their fraction (0.25). */
    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? Long.toString(d.toSeconds()) : String.format("%.2f", d.toMillis() / 1000.0);
    }

    private static long usedHeap() {
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }
}
