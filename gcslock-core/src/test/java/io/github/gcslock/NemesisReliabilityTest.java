package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.LockHistory;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The randomized reliability run with a nemesis: several processes (registries, each with its own
 * endpoint of the emulator, its own identity and its own drifting monotonic clock) contend for a few
 * names while a nemesis, driven by a printed seed, mixes:
 * <ul>
 * <li><b>partition</b> — one process cut off from GCS for longer than the TTL (its requests fail at once
 *     or hang) while the others contend; or cut in the middle of its next create (which commits, its
 *     reply lost) for 0.6 to 2.1 TTL;</li>
 * <li><b>slow</b> — replies to one process that commit but arrive after its operation timeout;</li>
 * <li><b>drift</b> — every process's monotonic clock runs at a random rate within ±20 %;</li>
 * <li><b>pause</b> — one process frozen for longer than the TTL: its user code stops at its next
 *     step and its requests are held and delivered late (when it resumes), as for SIGSTOP or a long GC;</li>
 * <li><b>close</b> — {@code close()} of one process's registry while its threads wait or hold (then the
 *     process restarts with a new registry, identity and clock);</li>
 * </ul>
 * and the workload itself uses {@code tryAcquire}, short waits, waits with {@code maxWait} longer than the
 * TTL, and hold-at-least releases ({@code releaseAfter}); emulator-wide faults add latency, lost replies,
 * 429/503 bursts and the per-object write limit.
 *
 * <p>Invariants, checked by {@link LockHistory} over the whole run:
 * <ul>
 * <li>no two holders of a name are healthy at the same instant — each worker samples
 *     {@code isHealthy()} at every step of its critical section, as a fenced write would;</li>
 * <li>fencing tokens strictly increase per name, and a fenced resource never sees an older token;</li>
 * <li>every lost-lease callback fires before another holder acquires the name;</li>
 * <li>no lease is healthy after its registry's {@code close()} returned;</li>
 * <li>no holder re-acquires a name during its own hold-at-least delay;</li>
 * <li>a lease ends with its object deleted whenever the object is still ours: after {@code release()}
 *     returned quickly (its process not cut off meanwhile, no timeout inside) the object is not ours any more;</li>
 * <li>after every registry has closed and a TTL has passed, no lock object is left.</li>
 * </ul>
 * The nemesis must bite: leases are lost and every kind of event happened. The summary line is
 * {@code RELIABILITY acquisitions=N overlaps=0 fencing_regressions=0 lost_leases=N leaked_objects=0
 * late_lost_callbacks=0 nemesis=partition:N,slow:N,drift:N,pause:N,close:N}.
 *
 * <p>Replay with {@code -Dgcslock.seed=...} (the nemesis schedule and every worker's choices follow the
 * seed; thread interleavings do not). {@code -Dgcslock.reliability.acquisitions=10000} runs the long form.
 *
 * <p>Why not jqwik with shrinking: a run is a set of threads racing real HTTP calls and timers, so one
 * seed does not reproduce one interleaving and a shrunk schedule would not replay the failure; what
 * makes a failure actionable here is the violation itself, printed with both leases' histories (ids,
 * tokens, healthy windows, callback times), plus the seed and the nemesis log around it.
 *
 * <p>Drift budget: a contender 20 % fast over-estimates GCS time by up to 0.2 × 2 TTL / 1.2 = TTL / 3
 * (the estimator keeps anchors for two TTLs), and a holder 20 % slow keeps its lease healthy up to
 * (TTL − margin) / 0.8 of real time after its last confirmed write; the safety margin (0.6 TTL) is
 * chosen so that the second (0.5 TTL) stays below TTL − TTL / 3, with 0.17 TTL (250 ms) to spare for the
 * lost-lease callback's threads on a loaded machine. With the default margin such drift would be unsafe
 * by configuration, not by an engine bug.
 */
class NemesisReliabilityTest extends EmulatorTestBase {

    private static final Duration NEMESIS_TTL = Duration.ofMillis(1500);
    private static final Duration NEMESIS_REFRESH = Duration.ofMillis(150);
    private static final Duration MARGIN = Duration.ofMillis(900);
    private static final Duration OP_TIMEOUT = Duration.ofMillis(250);
    private static final double MAX_RATE = 1.2;
    private static final String[] NAMES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"};
    private static final int PROCESSES = 5;
    private static final int THREADS_EACH = 3;
    /** The least nemesis time of a run, so that every kind of event happens several times. */
    private static final Duration MIN_NEMESIS = Duration.ofSeconds(30);

    private final LockHistory history = new LockHistory();
    private final AtomicInteger partitions = new AtomicInteger();
    private final AtomicInteger slows = new AtomicInteger();
    private final AtomicInteger drifts = new AtomicInteger();
    private final AtomicInteger pauses = new AtomicInteger();
    private final AtomicInteger closes = new AtomicInteger();
    private final List<String> nemesisLog = java.util.Collections.synchronizedList(new ArrayList<>());
    private final long t0 = System.nanoTime();
    private volatile boolean stop;

    /** A simulated process: a client endpoint of its own, a registry (replaced after a close), a drifting clock. */
    private final class Process {
        final int index;
        final String client;
        final Random rnd;
        volatile GcsLockRegistry registry;
        final Set<GcsLockRegistry> closed = ConcurrentHashMap.newKeySet();
        volatile long pausedUntil;
        volatile long busyUntil;
        /** Counts partition and pause starts and ends: a release checked for leaks must not straddle one. */
        final AtomicLong faultEpoch = new AtomicLong();
        final AtomicInteger holding = new AtomicInteger();
        final AtomicInteger waiting = new AtomicInteger();
        int incarnation;

        Process(int index, long seed) {
            this.index = index;
            this.client = "p" + index;
            this.rnd = new Random(seed);
            this.registry = newRegistry();
        }

        GcsLockRegistry newRegistry() {
            double rate = 1 + (rnd.nextDouble() * 2 - 1) * (MAX_RATE - 1);
            if (Math.abs(rate - 1) >= 0.02) {
                drifts.incrementAndGet();
            }
            int threads = 1 + (index % 2); // one refresher thread for some: deadlines must not wait behind I/O
            // Some refresh seldom (TTL / 4): a longer gap between a hand-out and the first refresh.
            Duration refresh = index % 2 == 1 ? NEMESIS_TTL.dividedBy(4) : NEMESIS_REFRESH;
            String identity = client + "." + (++incarnation);
            log("%s starts as %s, clock rate %.3f, %d refresher thread(s), refresh every %d ms", client, identity, rate,
                    threads, refresh.toMillis());
            GcsLockRegistry.Builder b = GcsLockRegistry.builder(gcs.storage(client), BUCKET);
            if (index != 0) {
                b.operationTimeout(OP_TIMEOUT); // p0 keeps the default (TTL/3): a hung call blocks longer
            }
            return b.ttl(NEMESIS_TTL).refreshInterval(refresh).safetyMargin(MARGIN)
                    .writeRateWindow(Duration.ofMillis(20)).backoff(Duration.ofMillis(10), Duration.ofMillis(100), 2.0)
                    .ticker(drifting(rate)).refresherThreads(threads).identity(identity)
                    .verifyBucket(false).build();
        }

        Duration operationTimeout() {
            return index == 0 ? NEMESIS_TTL.dividedBy(3) : OP_TIMEOUT;
        }

        ClientFaults faults() {
            return gcs.faults().client(client);
        }

        boolean busy() {
            return System.nanoTime() - busyUntil < 0;
        }

        /** A frozen process runs no user code: a worker stops at its next step until the pause ends. */
        void awaitUnpaused() throws InterruptedException {
            long left;
            while ((left = pausedUntil - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
        }
    }

    /** A monotonic clock that runs at {@code rate} × real time. */
    private static java.util.function.LongSupplier drifting(double rate) {
        long base = System.nanoTime();
        return () -> base + (long) ((System.nanoTime() - base) * rate);
    }

    private void log(String format, Object... args) {
        nemesisLog.add(String.format("%7d ms ", (System.nanoTime() - t0) / 1_000_000) + String.format(format, args));
    }

    @Test
    void theNemesisFindsNoViolation() throws Exception {
        RandomizedRun run = new RandomizedRun("NemesisReliabilityTest");
        long seed = run.seed;
        int target = run.target;
        Random random = run.random;
        run.injectEmulatorFaults(gcs, 0.02);
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            processes.add(new Process(i, random.nextLong()));
        }
        ExecutorService pool = Executors.newCachedThreadPool();
        ScheduledExecutorService healer = Executors.newSingleThreadScheduledExecutor();
        List<Future<?>> workers = new ArrayList<>();
        for (Process p : processes) {
            // One process runs more threads (so it holds several leases at once, on one refresher thread).
            for (int t = 0; t < (p.index == 0 ? 3 * THREADS_EACH : THREADS_EACH); t++) {
                long workerSeed = random.nextLong();
                Storage checker = gcs.storage(); // the shared endpoint: never partitioned
                workers.add(pool.submit(() -> work(p, new Random(workerSeed), checker)));
            }
        }
        long nemesisSeed = random.nextLong();
        AtomicLong nemesisEnd = new AtomicLong(Long.MAX_VALUE);
        long minEnd = System.nanoTime() + MIN_NEMESIS.toNanos();
        Future<?> nemesis = pool.submit(() -> nemesis(processes, new Random(nemesisSeed), healer, () ->
                System.nanoTime() - minEnd > 0 && history.acquisitions() >= target));
        try {
            nemesis.get(6, TimeUnit.HOURS);
            // Cool-down: every fault heals; the processes go on contending for three TTLs, so objects that
            // lost leases could not delete (cut off from GCS) are taken over and released.
            healer.shutdownNow();
            gcs.faults().reset();
            gcs.writeRateLimit(null);
            processes.forEach(p -> {
                p.pausedUntil = 0;
                p.faultEpoch.incrementAndGet();
            });
            log("nemesis stops; every fault healed");
            Thread.sleep(NEMESIS_TTL.multipliedBy(3).toMillis());
            // Every registry closes while its threads wait or hold.
            for (Process p : processes) {
                GcsLockRegistry r = p.registry;
                p.closed.add(r);
                r.close();
                history.registryClosed(r.owner());
                log("%s closed (final)", r.owner());
            }
        } finally {
            stop = true;
            for (Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
            healer.shutdownNow();
            processes.forEach(p -> p.registry.close()); // idempotent; only matters when the run failed early
        }
        // After every registry has closed and a TTL has passed, no lock object may be left.
        Thread.sleep(NEMESIS_TTL.plusMillis(300).toMillis());
        Storage clean = gcs.storage();
        for (Blob b : clean.list(BUCKET).iterateAll()) {
            history.leftover(b.getName(), "generation " + b.getGeneration() + ", metageneration " + b.getMetageneration()
                    + ", metadata " + b.getMetadata() + ", updated " + b.getUpdateTimeOffsetDateTime());
        }

        List<String> violations = history.violations();
        long fencing = history.fencingRegressions() + history.rejectedWrites();
        System.out.printf("RELIABILITY acquisitions=%d overlaps=%d fencing_regressions=%d lost_leases=%d leaked_objects=%d "
                        + "late_lost_callbacks=%d nemesis=partition:%d,slow:%d,drift:%d,pause:%d,close:%d%n",
                history.acquisitions(), history.overlaps(), fencing, history.lostLeases(), history.leakedObjects(),
                history.lateLostCallbacks(), partitions.get(), slows.get(), drifts.get(), pauses.get(), closes.get());
        System.out.printf("RELIABILITY-DETAIL seed=%d violations=%d healthy_after_close=%d reacquired_during_hold_at_least=%d "
                        + "never_ended=%d faults_injected=%d%n", seed, violations.size(), count(violations, "healthy after"),
                count(violations, "re-acquired"), count(violations, "never ended"), gcs.faults().faultsInjected());
        if (!violations.isEmpty()) {
            System.out.println("VIOLATIONS (at most 8 of each kind):");
            violations.stream().collect(java.util.stream.Collectors.groupingBy(v -> v.substring(0, v.indexOf(':')),
                    java.util.TreeMap::new, java.util.stream.Collectors.toList())).forEach((kind, vs) -> {
                System.out.println("  " + kind + ": " + vs.size());
                vs.stream().limit(8).forEach(v -> System.out.println("    " + v));
            });
            System.out.println("NEMESIS LOG:");
            nemesisLog.forEach(l -> System.out.println("  " + l));
        }
        // The nemesis must bite, whatever the engine does.
        assertThat(history.acquisitions()).isGreaterThanOrEqualTo(target);
        assertThat(history.lostLeases()).as("leases lost to the nemesis").isPositive();
        assertThat(List.of(partitions.get(), slows.get(), drifts.get(), pauses.get(), closes.get()))
                .as("every kind of nemesis event happened").allMatch(n -> n > 0);
        assertThat(violations).as("violations (seed " + seed + ")").isEmpty();
    }

    private static long count(List<String> violations, String prefix) {
        return violations.stream().filter(v -> v.startsWith(prefix)).count();
    }

    /** One worker thread of a process: acquire in one of several ways, do a few fenced steps, release. */
    private Void work(Process p, Random rnd, Storage checker) throws InterruptedException {
        while (!stop) {
            GcsLockRegistry r = p.registry;
            p.awaitUnpaused();
            String name = NAMES[rnd.nextInt(NAMES.length)];
            int how = rnd.nextInt(10);
            Lease lease;
            p.waiting.incrementAndGet();
            try {
                if (how < 3) {
                    Optional<Lease> l = r.tryAcquire(name);
                    if (l.isEmpty()) {
                        Thread.sleep(rnd.nextInt(10));
                        continue;
                    }
                    lease = l.get();
                } else if (how < 6) {
                    lease = r.acquire(name, Duration.ofMillis(50 + rnd.nextInt(250)));
                } else {
                    // A wait longer than the TTL: it spans partitions, pauses and takeovers.
                    lease = r.acquire(name, Duration.ofMillis((long) (NEMESIS_TTL.toMillis() * (1.1 + rnd.nextDouble() * 1.9))));
                }
            } catch (GcsLockException e) {
                continue; // not acquired in time, or GCS unreachable: nothing decided
            } catch (IllegalStateException e) {
                Thread.sleep(5); // this registry was closed; the process restarts with a new one
                continue;
            } finally {
                p.waiting.decrementAndGet();
            }
            long id = history.acquired(name, r.owner(), lease.fencingToken());
            lease.onLost((l, ex) -> history.lostCallback(id));
            p.holding.incrementAndGet();
            // Mostly short critical sections; one in four is a long job that checks its lease now and then
            // (sometimes only once a TTL: then only the lost-lease callback tells it in time).
            boolean longJob = rnd.nextInt(4) == 0;
            long longStepMs = rnd.nextInt(3) == 0 ? NEMESIS_TTL.toMillis() : 400;
            int steps = longJob ? 2 + rnd.nextInt(4) : 1 + rnd.nextInt(4);
            boolean lost = RandomizedRun.fencedSteps(history, id, name, lease, steps, p::awaitUnpaused,
                    () -> longJob ? 100 + rnd.nextInt((int) longStepMs) : rnd.nextInt(30));
            p.holding.decrementAndGet();
            String outcome = !lost ? "released" : p.closed.contains(r) ? "closed" : "lost";
            try {
                if (!lost && rnd.nextInt(5) == 0) {
                    // Hold at least: the object stays until the delay ends; this process must not re-enter it.
                    Duration delay = Duration.ofMillis((long) (NEMESIS_TTL.toMillis() * (0.2 + rnd.nextDouble())));
                    long before = System.nanoTime();
                    r.releaseAfter(lease, delay);
                    // The delay may run on the process's own clock, up to 20 % fast.
                    history.heldAtLeast(id, before + (long) (delay.toNanos() / MAX_RATE));
                } else {
                    long epoch = p.faultEpoch.get();
                    boolean reachable = !p.faults().isPartitioned();
                    long before = System.nanoTime();
                    lease.release();
                    // A release that took an operation timeout met a timeout (GCS unreachable for it, or this
                    // machine stalled): the engine then leaves the object to its TTL, as documented. A quick one
                    // either deleted the object or saw it was not ours any more.
                    boolean quick = System.nanoTime() - before < p.operationTimeout().toNanos();
                    if (reachable && quick && epoch == p.faultEpoch.get() && !p.faults().isPartitioned() && !p.closed.contains(r)) {
                        checkNothingLeftOf(lease, id, checker);
                    }
                }
            } catch (RuntimeException e) {
                log("%s: release of %s threw %s", r.owner(), name, e);
            }
            history.ended(id, outcome);
        }
        return null;
    }

    /**
     * After release() returned with GCS reachable, the lease's object must not be ours any more. A delete
     * the client gave up on may still be on its way (a loaded machine): look again after two (of the
     * longest) operation timeouts before calling it a leak.
     */
    private void checkNothingLeftOf(Lease lease, long id, Storage checker) throws InterruptedException {
        if (stillOurs(lease, checker) == null) {
            return;
        }
        Thread.sleep(NEMESIS_TTL.dividedBy(3).multipliedBy(2).toMillis()); // two of the longest operation timeouts
        Blob b = stillOurs(lease, checker);
        if (b != null) {
            history.leftover(b.getName(), "of lease#" + id + " (token " + lease.fencingToken()
                    + ") still there and ours after release() returned; metageneration " + b.getMetageneration()
                    + ", lost reason: " + lease.lostReason().orElse("none"));
        }
    }

    private static Blob stillOurs(Lease lease, Storage checker) {
        Blob b = checker.get(com.google.cloud.storage.BlobId.of(BUCKET, "gcslock/" + lease.name()));
        return b != null && b.getGeneration() == lease.fencingToken() && b.getMetadata() != null
                && lease.leaseId().equals(b.getMetadata().get("gcslock-lease")) ? b : null;
    }

    /**
     * For faults that bite holders (or waiters): mostly the process with the most of them now (several
     * leases of one process cut off at once is what makes hung refreshes delay other leases' deadlines).
     */
    private static Process pick(List<Process> processes, Random rnd, java.util.function.ToIntFunction<Process> weight) {
        if (rnd.nextInt(4) != 0) {
            int most = processes.stream().mapToInt(weight).max().orElse(0);
            List<Process> candidates = processes.stream().filter(p -> most > 0 && weight.applyAsInt(p) == most).toList();
            if (!candidates.isEmpty()) {
                return candidates.get(rnd.nextInt(candidates.size()));
            }
        }
        return processes.get(rnd.nextInt(processes.size()));
    }

    /** Picks an event now and then until {@code done}; faults heal on the healer's schedule. */
    private Void nemesis(List<Process> processes, Random rnd, ScheduledExecutorService healer,
                         java.util.function.BooleanSupplier done) throws InterruptedException {
        long ttlMs = NEMESIS_TTL.toMillis();
        while (!done.getAsBoolean()) {
            Thread.sleep(200 + rnd.nextInt(400));
            if (rnd.nextInt(4) == 0) {
                RandomizedRun.failureBurst(gcs, rnd);
            }
            int kind = rnd.nextInt(5);
            Process p = pick(processes, rnd, kind == 1 ? q -> q.waiting.get() : q -> q.holding.get());
            if (p.busy()) {
                continue;
            }
            switch (kind) {
                case 0, 1 -> { // partition longer than the TTL; kind 1: it starts mid-request
                    ClientFaults.Partition mode = rnd.nextBoolean() ? ClientFaults.Partition.FAIL : ClientFaults.Partition.HANG;
                    // Longer than the TTL; a cut mid-request is sometimes shorter (0.6 TTL and up): a create that
                    // committed unseen is then adopted after the outage, when nobody has taken it over yet but
                    // it is older than the adopter's deadline assumes.
                    long ms = (long) (ttlMs * (kind == 0 ? 1.1 + rnd.nextDouble() : 0.6 + rnd.nextDouble() * 1.5));
                    p.busyUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms + ttlMs);
                    p.faultEpoch.incrementAndGet();
                    if (kind == 0) {
                        p.faults().partition(mode);
                    } else {
                        // Cut during the next create (a waiter's attempt: it commits, the waiter never hears of it).
                        p.faults().partitionAfterNextRequest(mode, Operation.INSERT);
                    }
                    partitions.incrementAndGet();
                    log("%s partitioned (%s%s) for %d ms", p.registry.owner(), mode, kind == 1 ? ", mid-request" : "", ms);
                    healer.schedule(() -> {
                        p.faults().heal();
                        p.faultEpoch.incrementAndGet();
                        log("%s healed", p.client);
                    }, ms, TimeUnit.MILLISECONDS);
                }
                case 2 -> { // replies that commit after the operation timeout
                    int n = 1 + rnd.nextInt(3);
                    long ms = (long) (OP_TIMEOUT.toMillis() * (1.2 + rnd.nextDouble() * 2.8));
                    p.faults().slowReplies(n, Duration.ofMillis(ms));
                    slows.incrementAndGet();
                    log("%s: next %d replies %d ms late", p.registry.owner(), n, ms);
                }
                case 3 -> { // the process freezes for longer than the TTL
                    long ms = (long) (ttlMs * (1.1 + rnd.nextDouble()));
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
                    p.busyUntil = until + TimeUnit.MILLISECONDS.toNanos(ttlMs);
                    p.faultEpoch.incrementAndGet();
                    p.pausedUntil = until;
                    p.faults().partition(ClientFaults.Partition.DELAY);
                    pauses.incrementAndGet();
                    log("%s paused for %d ms", p.registry.owner(), ms);
                    healer.schedule(() -> {
                        p.faults().heal();
                        p.faultEpoch.incrementAndGet();
                        log("%s resumed", p.client);
                    }, ms, TimeUnit.MILLISECONDS);
                }
                default -> { // close() while its threads wait or hold, then restart
                    GcsLockRegistry old = p.registry;
                    p.busyUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * ttlMs);
                    p.closed.add(old);
                    log("%s closing (%d waiting, %d holding)", old.owner(), p.waiting.get(), p.holding.get());
                    old.close();
                    history.registryClosed(old.owner());
                    closes.incrementAndGet();
                    p.registry = p.newRegistry();
                }
            }
        }
        return null;
    }
}
