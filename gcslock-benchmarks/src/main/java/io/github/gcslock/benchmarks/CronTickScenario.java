package io.github.gcslock.benchmarks;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;

import java.time.Duration;
import java.util.ArrayList;
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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The commonest use: N instances of a service fire the same {@code @Scheduled} job at the same tick; one
 * runs it, the others skip (one attempt each, no waiting). Each instance is a registry (or baseline lock)
 * of its own with a client of its own, as separate processes have; they arrive spread uniformly over
 * 0–50 ms after the tick. The winner's job runs until every instance has decided (a real job outlasts the
 * tick's spread), then it releases. Same lock name every tick, so each instance remembers the last one.
 *
 * <p>Per tick: every GCS request from the first arrival to the winner's completed release; the time
 * until every instance has decided, both from each instance's own call (the lock's cost) and from the
 * tick (adds the arrival spread); and the runs, which must be exactly one.
 *
 * <p>The one-write-per-second limit is off here: within a tick the only writes to the object are the
 * winner's create and its delete a few RTTs later, and real ticks are a minute or more apart; with the
 * limit on, the delete would wait out the window and 30 ticks would not fit in {@code --quick}.
 */
final class CronTickScenario {

    /** Injected latency of every request: typical of small-object requests to GCS within a region. */
    static final long RTT_MS = 30;
    static final int SPREAD_MS = 50;
    static final String JOB = "nightly-report";

    private final Bench.Results results;
    private final int[] instanceCounts;
    private final int ticks;
    /** N → system → mean requests per tick, for the plot. */
    final Map<Integer, Map<String, Double>> requestsPerTick = new ConcurrentHashMap<>();

    CronTickScenario(Bench.Results results, int[] instanceCounts, int ticks) {
        this.results = results;
        this.instanceCounts = instanceCounts;
        this.ticks = ticks;
    }

    void run() throws Exception {
        for (int n : instanceCounts) {
            for (String system : List.of("ours", "naive", "shedlock")) {
                runOne(system, n);
            }
        }
    }

    /** One instance of the service: one attempt at the tick, and the release after the job. */
    private interface Instance {
        /** One attempt, no waiting: true if this instance runs the job. */
        boolean tryRun() throws Exception;

        void finish() throws Exception;
    }

    private static Instance instance(String system, GcsEmulator gcs, List<GcsLockRegistry> registries) {
        switch (system) {
            case "ours" -> {
                GcsLockRegistry r = GcsLockRegistry.builder(Bench.boundedStorage(gcs), Bench.BUCKET).verifyBucket(false).build();
                registries.add(r);
                return new Instance() {
                    private Lease lease;

                    @Override
                    public boolean tryRun() {
                        Optional<Lease> l = r.tryAcquire(JOB);
                        lease = l.orElse(null);
                        return l.isPresent();
                    }

                    @Override
                    public void finish() {
                        lease.release();
                    }
                };
            }
            case "naive" -> {
                return baseline(new NaiveGcsLock(Bench.boundedStorage(gcs), Bench.BUCKET));
            }
            default -> {
                return baseline(new ShedLockStyleGcsLock(Bench.boundedStorage(gcs), Bench.BUCKET, Duration.ofMinutes(5)));
            }
        }
    }

    private static Instance baseline(BaselineLock lock) {
        return new Instance() {
            @Override
            public boolean tryRun() {
                return lock.tryLock(JOB);
            }

            @Override
            public void finish() {
                lock.unlock(JOB);
            }
        };
    }

    private record Tick(long requests, Map<Operation, Long> byOperation, Map<Operation, Long> billed, int runs, int errors, double slowestOwnMs,
                        double slowestFromTickMs) {
    }

    private void runOne(String system, int n) throws Exception {
        try (GcsEmulator gcs = Bench.emulator()) {
            gcs.faults().latency(Duration.ofMillis(RTT_MS), Duration.ofMillis(RTT_MS));
            List<GcsLockRegistry> registries = new ArrayList<>();
            List<Instance> instances = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                instances.add(instance(system, gcs, registries));
            }
            ExecutorService pool = Executors.newFixedThreadPool(n);
            try {
                tick(gcs, pool, instances); // warm-up (connections, JIT), not counted
                List<Tick> outcomes = new ArrayList<>();
                for (int t = 0; t < ticks; t++) {
                    outcomes.add(tick(gcs, pool, instances));
                    Thread.sleep(20);
                }
                report(system, n, outcomes);
            } finally {
                pool.shutdownNow();
                registries.forEach(GcsLockRegistry::close);
            }
        }
    }

    private Tick tick(GcsEmulator gcs, ExecutorService pool, List<Instance> instances) throws Exception {
        int n = instances.size();
        gcs.faults().resetCounters();
        CountDownLatch decided = new CountDownLatch(n);
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        long[] calledAt = new long[n];
        long[] decidedAt = new long[n];
        long tickAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            long arrival = tickAt + ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(SPREAD_MS) + 1);
            fs.add(pool.submit(() -> {
                Bench.sleepUntil(arrival);
                calledAt[k] = System.nanoTime();
                boolean run;
                try {
                    run = instances.get(k).tryRun();
                } catch (GcsLockException | com.google.cloud.storage.StorageException e) {
                    run = false; // undecided counts as a skip, and is reported
                    errors.incrementAndGet();
                }
                decidedAt[k] = System.nanoTime();
                decided.countDown();
                if (run) {
                    runs.incrementAndGet();
                    decided.await(); // the job outlasts the tick's spread
                    instances.get(k).finish();
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(2, TimeUnit.MINUTES);
        }
        double slowestOwn = 0;
        double slowestFromTick = 0;
        for (int i = 0; i < n; i++) {
            slowestOwn = Math.max(slowestOwn, (decidedAt[i] - calledAt[i]) / 1e6);
            slowestFromTick = Math.max(slowestFromTick, (decidedAt[i] - tickAt) / 1e6);
        }
        return new Tick(gcs.faults().objectRequests(), gcs.faults().requestCounts(), gcs.faults().successfulRequestCounts(),
                runs.get(), errors.get(), slowestOwn, slowestFromTick);
    }

    private void report(String system, int n, List<Tick> ticks) {
        Bench.Stats requests = Bench.Stats.of(ticks.stream().map(Tick::requests).toList());
        Bench.Stats own = Bench.Stats.of(ticks.stream().map(Tick::slowestOwnMs).toList());
        Bench.Stats fromTick = Bench.Stats.of(ticks.stream().map(Tick::slowestFromTickMs).toList());
        long violations = ticks.stream().filter(t -> t.runs() != 1).count();
        int minRuns = ticks.stream().mapToInt(Tick::runs).min().orElse(0);
        int maxRuns = ticks.stream().mapToInt(Tick::runs).max().orElse(0);
        int errors = ticks.stream().mapToInt(Tick::errors).sum();
        requestsPerTick.computeIfAbsent(n, k -> new ConcurrentHashMap<>()).put(system, requests.mean());
        results.add(String.format("cron-tick system=%s instances=%d ticks=%d rtt_ms=%d requests_per_tick_mean=%.2f "
                        + "requests_per_tick_max=%.0f requests_per_instance=%.2f by_operation_per_tick=%s all_decided_p50_ms=%.0f all_decided_p99_ms=%.0f "
                        + "all_decided_p99_rtt=%.2f from_tick_p50_ms=%.0f from_tick_p99_ms=%.0f runs_min=%d runs_max=%d "
                        + "violations=%d errors=%d usd_per_month_every_minute=%.2f usd_per_month_every_minute_if_4xx_billed=%.2f",
                system, n, ticks.size(), RTT_MS, requests.mean(), requests.max(), requests.mean() / n,
                Bench.perOperation(Bench.sum(ticks.stream().map(Tick::byOperation).toList()), ticks.size()), own.p50(), own.p99(),
                own.p99() / RTT_MS, fromTick.p50(), fromTick.p99(), minRuns, maxRuns, violations, errors,
                Pricing.usd(Bench.sum(ticks.stream().map(Tick::billed).toList()), ticks.size(), Pricing.MINUTES_PER_MONTH),
                Pricing.usd(Bench.sum(ticks.stream().map(Tick::byOperation).toList()), ticks.size(), Pricing.MINUTES_PER_MONTH)));
    }
}
