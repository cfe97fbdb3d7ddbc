package io.github.gcslock.benchmarks;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * One hot lock passed around by contenders in separate processes (a registry or baseline lock and a client
 * each), with GCS's one-write-per-second limit on: every handoff needs the holder's delete and the next
 * create, each in a write window of its own, so a handoff gap (release done → next acquired) cannot be
 * shorter than {@link #FLOOR_MS}. Each run goes on until {@code acquisitions} acquisitions (or a time cap).
 *
 * <ul>
 * <li>{@code contention}: 2, 8 and 32 contenders, a 5 ms critical section; gcslock with TTL 30 s and
 * backoff 100 ms → 2 s.</li>
 * <li>{@code long-waiters}: 8 contenders and a 1 s critical section, so every contender waits about
 * 8 × 2 s between its turns: what a waiter costs once it has waited long; gcslock as shipped (TTL 5 min,
 * backoff 1 s → 30 s, the poll cap of a long waiter grows up to a quarter of the TTL).</li>
 * </ul>
 * The runs are independent (an emulator each) and run side by side, so that 30+ acquisitions per
 * configuration fit in {@code --quick}; CPU use is low (a few hundred requests per second in all).
 */
final class HandoffScenario {

    static final long RTT_MS = 5;
    static final double FLOOR_MS = 1000;
    static final List<String> SYSTEMS = List.of("ours", "naive", "shedlock");

    /** One configuration to run. */
    record Config(String scenario, String system, int contenders, long holdMs, int acquisitions, Duration cap) {
        /** long-waiters runs gcslock as shipped (TTL 5 min, backoff 1 s → 30 s); contention keeps its shorter settings. */
        boolean engineDefaults() {
            return scenario.equals("long-waiters");
        }
    }

    /** What one run measured. */
    record Outcome(Config config, long acquisitions, long requests, Map<Operation, Long> byOperation,
                   Map<Operation, Long> billed, Bench.Stats gaps,
                   long fairnessMax, long fairnessMin, long neverAcquired, double waitMaxMs, long rateLimited, long elapsedMs,
                   long errors) {
        double requestsPerAcquisition() {
            return acquisitions == 0 ? Double.NaN : (double) requests / acquisitions;
        }
    }

    /** One system under contention: how it acquires (waiting until the deadline or stop) and releases. */
    private interface Contender {
        /** Waits for the lock; returns a release action, or null if the time ran out or the run stopped. */
        Runnable acquire(long deadlineNanos, BooleanSupplier stop) throws Exception;
    }

    private final Bench.Results results;
    /** contenders → system → handoff p50 (ms) of the contention runs, for the plot. */
    final Map<Integer, Map<String, Double>> handoffP50 = new ConcurrentHashMap<>();
    /** contenders → system → requests per acquisition of the contention runs, for the plot. */
    final Map<Integer, Map<String, Double>> requestsPerAcquisition = new ConcurrentHashMap<>();

    HandoffScenario(Bench.Results results) {
        this.results = results;
    }

    static List<Config> contention(int acquisitions, Duration cap) {
        List<Config> cs = new ArrayList<>();
        for (int c : new int[]{2, 8, 32}) {
            for (String s : SYSTEMS) {
                cs.add(new Config("contention", s, c, 5, acquisitions, cap));
            }
        }
        return cs;
    }

    static List<Config> longWaiters(int acquisitions, Duration cap) {
        return SYSTEMS.stream().map(s -> new Config("long-waiters", s, 8, 1000, acquisitions, cap)).toList();
    }

    /** Runs every configuration side by side; prints their RESULT lines in the given order. */
    List<Outcome> run(List<Config> configs) throws Exception {
        ExecutorService runs = Executors.newFixedThreadPool(Math.max(1, configs.size()));
        try {
            List<Future<Outcome>> fs = new ArrayList<>();
            for (Config c : configs) {
                fs.add(runs.submit(() -> runOne(c)));
            }
            List<Outcome> outcomes = new ArrayList<>();
            for (Future<Outcome> f : fs) {
                outcomes.add(f.get(15, TimeUnit.MINUTES));
            }
            outcomes.forEach(this::report);
            return outcomes;
        } finally {
            runs.shutdownNow();
        }
    }

    private Contender contender(Config config, GcsEmulator gcs, List<GcsLockRegistry> registries, AtomicLong errors) {
        switch (config.system()) {
            case "ours" -> {
                GcsLockRegistry.Builder b = GcsLockRegistry.builder(Bench.boundedStorage(gcs), Bench.BUCKET).verifyBucket(false);
                if (!config.engineDefaults()) {
                    b.ttl(Duration.ofSeconds(30)).refreshInterval(Duration.ofSeconds(5))
                            .backoff(Duration.ofMillis(100), Duration.ofSeconds(2), 2);
                }
                GcsLockRegistry r = b.build();
                registries.add(r);
                return (deadline, stop) -> {
                    while (true) {
                        long wait = deadline - System.nanoTime();
                        if (wait <= 0 || stop.getAsBoolean()) {
                            return null;
                        }
                        try {
                            Lease l = r.acquire("hot", Duration.ofNanos(wait));
                            return l::release;
                        } catch (IllegalStateException e) {
                            return null; // the registry was closed to end the run
                        } catch (GcsLockException e) {
                            // Timed out (the loop ends), or an error before the deadline: counted, and the contender
                            // asks again. (It used to stop for good, so a run could end far below its acquisitions.)
                            if (deadline - System.nanoTime() > 0 && !stop.getAsBoolean()) {
                                errors.incrementAndGet();
                            }
                        }
                    }
                };
            }
            case "naive" -> {
                NaiveGcsLock lock = new NaiveGcsLock(Bench.boundedStorage(gcs), Bench.BUCKET);
                // its own waiting: exponential from 100 ms, no cap, no jitter
                return (deadline, stop) -> poll(lock, deadline, stop, attempt -> NaiveGcsLock.backoffMillis(100, attempt));
            }
            default -> {
                ShedLockStyleGcsLock lock = new ShedLockStyleGcsLock(Bench.boundedStorage(gcs), Bench.BUCKET, Duration.ofMinutes(5));
                // ShedLock itself never waits; polled here with the same capped jittered backoff as ours
                return (deadline, stop) -> poll(lock, deadline, stop,
                        attempt -> ThreadLocalRandom.current().nextLong(Math.min(1000, 100L << Math.min(attempt, 10)) + 1));
            }
        }
    }

    private interface Backoff {
        long millis(int attempt);
    }

    private static Runnable poll(BaselineLock lock, long deadline, BooleanSupplier stop, Backoff backoff)
            throws InterruptedException {
        for (int attempt = 0; System.nanoTime() < deadline && !stop.getAsBoolean(); attempt++) {
            if (lock.tryLock("hot")) {
                return () -> lock.unlock("hot");
            }
            long sleep = Math.min(backoff.millis(attempt), TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, sleep));
            while (System.nanoTime() < until && !stop.getAsBoolean()) { // a stopped run ends without waiting out the backoff
                Thread.sleep(Math.min(50, Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()))));
            }
        }
        return null;
    }

    private Outcome runOne(Config config) throws Exception {
        int contenders = config.contenders();
        try (GcsEmulator gcs = Bench.emulator()) {
            gcs.faults().latency(Duration.ofMillis(RTT_MS), Duration.ofMillis(RTT_MS));
            gcs.writeRateLimit(true);
            List<GcsLockRegistry> registries = Collections.synchronizedList(new ArrayList<>());
            List<Contender> cs = new ArrayList<>();
            AtomicLong errors = new AtomicLong();
            for (int i = 0; i < contenders; i++) {
                cs.add(contender(config, gcs, registries, errors));
            }
            gcs.faults().resetCounters();
            long start = System.nanoTime();
            long deadline = start + config.cap().toNanos();
            long[] perContender = new long[contenders];
            List<long[]> events = Collections.synchronizedList(new ArrayList<>()); // {acquiredAt, releasedAt, calledAt}
            AtomicLong acquisitions = new AtomicLong();
            long[] atTarget = new long[2]; // {requests, elapsed ms} when the target was reached
            AtomicReference<Map<Operation, Long>> byOperationAtTarget = new AtomicReference<>();
            AtomicReference<Map<Operation, Long>> billedAtTarget = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            BooleanSupplier stop = () -> done.getCount() == 0;
            ExecutorService pool = Executors.newFixedThreadPool(contenders);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < contenders; i++) {
                int idx = i;
                fs.add(pool.submit(() -> {
                    go.await();
                    while (!stop.getAsBoolean() && System.nanoTime() < deadline) {
                        long calledAt = System.nanoTime();
                        Runnable release = cs.get(idx).acquire(deadline, stop);
                        if (release == null) {
                            break;
                        }
                        long acquiredAt = System.nanoTime();
                        Thread.sleep(config.holdMs()); // the critical section
                        try {
                            release.run();
                        } catch (RuntimeException e) {
                            if (!stop.getAsBoolean()) {
                                throw e;
                            } // the run ended while this contender held the lock: closing released it
                        }
                        long releasedAt = System.nanoTime();
                        perContender[idx]++;
                        events.add(new long[]{acquiredAt, releasedAt, calledAt});
                        if (acquisitions.incrementAndGet() == config.acquisitions()) {
                            atTarget[0] = gcs.faults().objectRequests();
                            byOperationAtTarget.set(gcs.faults().requestCounts());
                            billedAtTarget.set(gcs.faults().successfulRequestCounts());
                            atTarget[1] = Bench.millisSince(start);
                            done.countDown();
                            registries.forEach(GcsLockRegistry::close); // wakes our waiters: the run is over
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : fs) {
                f.get(config.cap().toSeconds() + 120, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
            registries.forEach(GcsLockRegistry::close);
            boolean reached = done.getCount() == 0;
            long n = reached ? config.acquisitions() : acquisitions.get();
            long requests = reached ? atTarget[0] : gcs.faults().objectRequests();
            List<long[]> sorted = new ArrayList<>(events);
            sorted.sort((a, b) -> Long.compare(a[0], b[0]));
            double[] gaps = new double[Math.max(0, (int) Math.min(sorted.size(), n) - 1)];
            for (int i = 1; i <= gaps.length; i++) {
                gaps[i - 1] = (sorted.get(i)[0] - sorted.get(i - 1)[1]) / 1e6;
            }
            double waitMaxMs = sorted.stream().limit(n).mapToDouble(e -> (e[0] - e[2]) / 1e6).max().orElse(Double.NaN);
            Map<Operation, Long> byOperation = reached ? byOperationAtTarget.get() : gcs.faults().requestCounts();
            Map<Operation, Long> billed = reached ? billedAtTarget.get() : gcs.faults().successfulRequestCounts();
            return new Outcome(config, n, requests, byOperation, billed, Bench.Stats.of(gaps), Arrays.stream(perContender).max().orElse(0),
                    Arrays.stream(perContender).min().orElse(0), Arrays.stream(perContender).filter(a -> a == 0).count(),
                    waitMaxMs, gcs.faults().rateLimited(),
                    reached ? atTarget[1] : Bench.millisSince(start), errors.get());
        }
    }

    private void report(Outcome o) {
        Config c = o.config();
        if (c.scenario().equals("contention")) {
            handoffP50.computeIfAbsent(c.contenders(), k -> new ConcurrentHashMap<>()).put(c.system(), o.gaps().p50());
            requestsPerAcquisition.computeIfAbsent(c.contenders(), k -> new ConcurrentHashMap<>())
                    .put(c.system(), o.requestsPerAcquisition());
        }
        results.add(String.format("%s system=%s contenders=%d hold_ms=%d acquisitions=%d requests_per_acquisition=%.1f "
                        + "by_operation=%s handoff_n=%d handoff_p50_ms=%.0f handoff_p95_ms=%.0f handoff_p99_ms=%.0f handoff_p50_over_floor=%.2f "
                        + "wait_max_s=%.1f fairness_max=%d fairness_min=%d never_acquired=%d rate_limited_429=%d errors=%d elapsed_s=%.0f "
                        + "usd_per_million_acquisitions=%.2f usd_per_million_acquisitions_if_4xx_billed=%.2f",
                c.scenario(), c.system(), c.contenders(), c.holdMs(), o.acquisitions(), o.requestsPerAcquisition(),
                Bench.perOperation(o.byOperation(), o.acquisitions()),
                o.gaps().n(), o.gaps().p50(), o.gaps().p95(), o.gaps().p99(), o.gaps().p50() / FLOOR_MS,
                o.waitMaxMs() / 1000, o.fairnessMax(), o.fairnessMin(), o.neverAcquired(), o.rateLimited(), o.errors(), o.elapsedMs() / 1000.0,
                Pricing.usd(o.billed(), o.acquisitions(), 1e6), Pricing.usd(o.byOperation(), o.acquisitions(), 1e6)));
    }

    /** For long-waiters: how many times fewer requests per acquisition ours needs than naive. */
    void reportLongWaiterGoal(List<Outcome> outcomes) {
        Outcome ours = find(outcomes, "long-waiters", "ours");
        Outcome naive = find(outcomes, "long-waiters", "naive");
        if (ours != null && naive != null) {
            results.add(String.format("long-waiters-goal naive_over_ours_requests=%.2f ours_handoff_p50_over_floor=%.2f",
                    naive.requestsPerAcquisition() / ours.requestsPerAcquisition(), ours.gaps().p50() / FLOOR_MS));
        }
    }

    private static Outcome find(List<Outcome> outcomes, String scenario, String system) {
        return outcomes.stream().filter(o -> o.config().scenario().equals(scenario) && o.config().system().equals(system))
                .findFirst().orElse(null);
    }
}
