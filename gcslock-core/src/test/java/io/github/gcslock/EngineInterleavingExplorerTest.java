package io.github.gcslock;

import com.google.cloud.storage.Blob;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29 part 2: the engine's own threads (refresh timer, refresh threads, deadline thread, listener threads, the
 * callers, {@code close()}) explored deterministically in virtual time ({@link VirtualWorld}) over the in-memory
 * bucket ({@link InMemoryStorage}), through the public API only. Each scenario runs under many seeded random
 * schedules; a failure prints the seed and the whole schedule, and {@code -Dgcslock.explorer.seed=N} replays one
 * ({@code -Dgcslock.explorer.runs=N} runs N schedules per scenario, 100 by default; the seeds are fixed per scenario
 * unless {@code -Dgcslock.explorer.randomSeeds=true}).
 *
 * <p>Checked at every quiescent point or at the call's return:
 * <ul>
 *   <li>at most one healthy holder per name (leases whose release the application has not asked for);</li>
 *   <li>a holder's {@code lost} listener has started before another holder's acquire of the name returns;</li>
 *   <li>without faults: nothing of a lease is left in the bucket once its {@code release()} or its registry's
 *       {@code close()} has returned, and nothing at all once every registry is closed;</li>
 *   <li>no hang: every caller returns, within a bound of steps and virtual time;</li>
 *   <li>no caller gets an exception the API does not document.</li>
 * </ul>
 */
class EngineInterleavingExplorerTest {

    static final int RUNS = Integer.getInteger("gcslock.explorer.runs", 100);
    static final Long SEED = Long.getLong("gcslock.explorer.seed");
    static final boolean RANDOM_SEEDS = Boolean.getBoolean("gcslock.explorer.randomSeeds");
    static final Duration TTL = Duration.ofSeconds(10);
    /**
     * How long close(), and a release() racing close()'s release of its lease, wait for a release another thread runs
     * (the registry's bound: four operation timeouts of TTL/3 and two 1 s write windows). The explorer may leave a due
     * wait of the releasing thread undecided for longer (a paused thread); a call that waited its whole bound gave up as
     * documented (a WARN), so the checks below hold the object to the call only when it returned sooner.
     */
    static final Duration RELEASE_BOUND = TTL.dividedBy(3).multipliedBy(4).plus(Duration.ofSeconds(2));
    @Test
    void acquireReleaseAndCloseRacing() {
        explore("acquire/release/close racing", false, run -> {
            GcsLockRegistry r1 = run.registry("p1");
            GcsLockRegistry r2 = run.registry("p2");
            run.actor("p1-try", () -> run.hold(run.tryAcquire(r1, "x"), run.upTo(3)));
            run.actor("p1-wait", () -> run.hold(run.acquire(r1, "x", Duration.ofSeconds(5)), run.upTo(3)));
            run.actor("p2-wait", () -> run.hold(run.acquire(r2, "x", Duration.ofSeconds(5)), run.upTo(3)));
            run.actor("p1-close", () -> run.closeAfter(r1, run.upTo(6)));
            run.actor("p2-close", () -> run.closeAfter(r2, Duration.ofSeconds(12)));
        });
    }

    @Test
    void aRefreshInFlightRacingReleaseAndClose() {
        explore("refresh in flight racing release and close", false, run -> {
            GcsLockRegistry r1 = run.registry("p1");
            GcsLockRegistry r2 = run.registry("p2");
            run.actor("p1-holder", () -> run.hold(run.acquire(r1, "x", Duration.ofSeconds(1)), run.upTo(5)));
            run.actor("p1-holder-y", () -> run.hold(run.tryAcquire(r1, "y"), run.upTo(5)));
            run.actor("p1-close", () -> run.closeAfter(r1, run.upTo(6)));
            run.actor("p2-wait", () -> run.hold(run.acquire(r2, "x", Duration.ofSeconds(20)), Duration.ofSeconds(1)));
            run.actor("p2-close", () -> run.closeAfter(r2, Duration.ofSeconds(25)));
        });
    }

    @Test
    void theDeadlineFiringWhileARefreshReplyArrives() {
        explore("deadline vs refresh reply (faults)", true, run -> {
            GcsLockRegistry r1 = run.registry("p1");
            GcsLockRegistry r2 = run.registry("p2");
            run.actor("p1-holder", () -> run.hold(run.acquire(r1, "x", Duration.ofSeconds(2)), run.upTo(25)));
            run.actor("p2-wait", () -> run.hold(run.acquire(r2, "x", Duration.ofSeconds(40)), Duration.ofSeconds(2)));
            run.actor("p1-close", () -> run.closeAfter(r1, Duration.ofSeconds(45)));
            run.actor("p2-close", () -> run.closeAfter(r2, Duration.ofSeconds(45)));
        });
    }

    @Test
    void aLostListenerRacingTheNextAcquirer() {
        explore("slow or throwing lost listener vs the next acquirer (faults)", true, run -> {
            GcsLockRegistry r1 = run.registry("p1");
            r1.addListener(new LockEventListener() {
                @Override
                public void lost(Lease lease, LockLostException reason) {
                    run.world.pause("p1's lost listener of " + lease.name());
                    if (lease.fencingToken() % 2 == 0) {
                        throw new IllegalStateException("a lost listener that throws");
                    }
                }

                @Override
                public void released(Lease lease) {
                    run.world.pause("p1's released listener of " + lease.name());
                }
            });
            GcsLockRegistry r2 = run.registry("p2");
            run.actor("p1-holder", () -> run.hold(run.acquire(r1, "x", Duration.ofSeconds(2)), run.upTo(25)));
            run.actor("p1-again", () -> {
                run.world.sleepVirtual(run.upTo(20));
                run.hold(run.acquire(r1, "x", Duration.ofSeconds(10)), Duration.ofSeconds(1));
            });
            run.actor("p2-wait", () -> run.hold(run.acquire(r2, "x", Duration.ofSeconds(40)), Duration.ofSeconds(2)));
            run.actor("p1-close", () -> run.closeAfter(r1, Duration.ofSeconds(45)));
            run.actor("p2-close", () -> run.closeAfter(r2, Duration.ofSeconds(45)));
        });
    }

    @Test
    void renewRacingTheScheduledRefresh() {
        explore("renew racing the scheduled refresh", false, run -> renewScenario(run));
    }

    @Test
    void renewRacingTheScheduledRefreshUnderFaults() {
        explore("renew racing the scheduled refresh (faults)", true, run -> renewScenario(run));
    }

    private static void renewScenario(Run run) {
        GcsLockRegistry r1 = run.registry("p1");
        GcsLockRegistry r2 = run.registry("p2");
        Duration[] ttls = {null, Duration.ofSeconds(4), Duration.ofSeconds(30)};
        Duration first = ttls[run.setup.nextInt(ttls.length)];
        Duration second = ttls[run.setup.nextInt(ttls.length)];
        run.actor("p1-renewer", () -> {
            Lease l = run.acquire(r1, "x", Duration.ofSeconds(2));
            if (l == null) {
                return;
            }
            run.world.sleepVirtual(run.upTo(3));
            run.renew(r1, l, first);
            run.world.sleepVirtual(run.upTo(3));
            run.renew(r1, l, second);
            run.hold(l, run.upTo(3));
        });
        run.actor("p2-wait", () -> run.hold(run.acquire(r2, "x", Duration.ofSeconds(30)), Duration.ofSeconds(1)));
        run.actor("p1-close", () -> run.closeAfter(r1, Duration.ofSeconds(35)));
        run.actor("p2-close", () -> run.closeAfter(r2, Duration.ofSeconds(35)));
    }

    @Test
    void aWaiterWokenByClose() {
        explore("waiters woken by close", false, EngineInterleavingExplorerTest::waitersAndClose);
    }

    /**
     * Found by this explorer (seed 7912361562469766918 of {@link #aWaiterWokenByClose}): p1-holder's acquire(1 s) queued
     * on the local permit behind p1-waiter, whose look had set the name's next look seconds ahead; its budget ran out
     * in the queue, it took the permit, found the look not due, gave the permit back and went round again — with no
     * budget left it never waited, so it spun (a CPU busy, virtual time frozen) until the look came due, and the call
     * outlived its maxWait. Before the fix: "threads did not settle in 20 s (real; a thread spinning?)", actor-p1-holder
     * RUNNABLE at Acquirer.waitLoop.
     */
    @Test
    void aWaitWhoseBudgetRanOutWhileAnotherThreadPacesEndsWithoutSpinning() {
        explore("waiters woken by close, seed of the spinning wait", false, 7912361562469766918L, 1,
                EngineInterleavingExplorerTest::waitersAndClose);
    }

    /**
     * A harness defect, not the engine's (seed -2838921146019854253 of {@link #aWaiterWokenByClose}): the schedule started
     * p2-close only at 65.2 s of virtual time, so its 70 s sleep before close() ended at 135.2 s, past the explorer's
     * 120 s budget counted from the first step. Nothing else was left to do, time was not allowed to move on, and the
     * run was reported as "hang: no step possible at virtual PT1M10.586666666S", actor-p2-close "WAITING at sleep
     * PT1M10S" — the scenario's own sleep in closeAfter, not close(). The budget now counts from the last actor's start.
     */
    @Test
    void anActorStartedLateGetsItsWholeBudgetOfVirtualTime() {
        explore("waiters woken by close, seed of the late close", false, -2838921146019854253L, 1,
                EngineInterleavingExplorerTest::waitersAndClose);
    }

    private static void waitersAndClose(Run run) {
        GcsLockRegistry r1 = run.registry("p1");
        GcsLockRegistry r2 = run.registry("p2");
        run.actor("p1-holder", () -> run.hold(run.acquire(r1, "x", Duration.ofSeconds(1)), Duration.ofSeconds(20)));
        run.actor("p1-waiter", () -> run.hold(run.acquire(r1, "x", Duration.ofSeconds(60)), Duration.ofSeconds(1)));
        run.actor("p2-waiter", () -> run.hold(run.acquire(r2, "x", Duration.ofSeconds(60)), Duration.ofSeconds(1)));
        run.actor("p1-close", () -> run.closeAfter(r1, run.upTo(10)));
        run.actor("p2-close", () -> run.closeAfter(r2, Duration.ofSeconds(70)));
    }

    // ------------------------------------------------------------------ the harness

    private static void explore(String scenario, boolean faults, Consumer<Run> setup) {
        // The README's test command explores fixed seeds per scenario, so a CI run is reproducible; a random base
        // (-Dgcslock.explorer.randomSeeds=true) explores new schedules.
        long base = SEED != null ? SEED : RANDOM_SEEDS ? new Random().nextLong() : scenario.hashCode() * 1_000_003L;
        explore(scenario, faults, base, SEED != null ? 1 : RUNS, setup);
    }

    private static void explore(String scenario, boolean faults, long base, int runs, Consumer<Run> setup) {
        long started = System.nanoTime();
        System.out.printf("explorer '%s': seeds %d .. %d (replay: -Dgcslock.explorer.seed=N)%n", scenario, base, base + runs - 1);
        for (int i = 0; i < runs; i++) {
            long seed = base + i;
            Run run = new Run(seed, faults);
            setup.accept(run);
            run.go(scenario);
        }
        System.out.printf("explorer '%s': %d schedules held in %d ms%n", scenario, runs,
                (System.nanoTime() - started) / 1_000_000);
    }

    /** One schedule of one scenario: its world, bucket, registries, and what the callers saw. */
    static final class Run {
        final VirtualWorld world;
        final InMemoryStorage bucket;
        final boolean faults;
        /** Decisions of the set-up (durations), so that they do not depend on the order actors run in. */
        final Random setup;
        final List<GcsLockRegistry> registries = new ArrayList<>();
        final Map<GcsLockRegistry, String> names = new ConcurrentHashMap<>();
        final List<Held> held = Collections.synchronizedList(new ArrayList<>());
        final Set<GcsLockRegistry> closed = ConcurrentHashMap.newKeySet();
        final List<String> violations = Collections.synchronizedList(new ArrayList<>());

        Run(long seed, boolean faults) {
            this.world = new VirtualWorld(seed, faults, TTL.dividedBy(3));
            this.bucket = new InMemoryStorage("locks", world::instant);
            this.bucket.gate = world;
            this.faults = faults;
            this.setup = new Random(seed ^ 0x5DEECE66DL);
        }

        /** A lease as the application holds it. */
        final class Held {
            final GcsLockRegistry registry;
            final Lease lease;
            volatile boolean releaseAsked;
            /** The application's release() of it is running (asked, not returned). */
            volatile boolean releaseRunning;
            volatile boolean lostStarted;

            Held(GcsLockRegistry registry, Lease lease) {
                this.registry = registry;
                this.lease = lease;
            }

            @Override
            public String toString() {
                return names.get(registry) + "'s lease " + lease.fencingToken() + " of '" + lease.name() + "'";
            }
        }

        GcsLockRegistry registry(String name) {
            GcsLockRegistry r = GcsLockRegistry.builder(bucket.storage(), "locks")
                    .storageAsGiven()
                    .runtime(world)
                    .verifyBucket(false)
                    .ticker(world::nanoTime)
                    .clock(world.clock())
                    .ttl(TTL)
                    .identity(name)
                    .build();
            r.addListener(new LockEventListener() {
                @Override
                public void lost(Lease lease, LockLostException reason) {
                    synchronized (held) {
                        held.stream().filter(h -> h.registry == r && h.lease.fencingToken() == lease.fencingToken())
                                .forEach(h -> h.lostStarted = true);
                    }
                }
            });
            registries.add(r);
            names.put(r, name);
            return r;
        }

        void actor(String name, VirtualWorld.ThrowingRunnable body) {
            world.actor(name, body);
        }

        Duration upTo(int seconds) {
            return Duration.ofMillis(setup.nextInt(seconds * 1000 + 1));
        }

        Lease tryAcquire(GcsLockRegistry r, String name) {
            try {
                Optional<Lease> l = r.tryAcquire(name);
                return l.map(lease -> acquired(r, lease)).orElse(null);
            } catch (IllegalStateException | GcsLockException e) {
                return null; // closed, or GCS unreachable
            }
        }

        Lease acquire(GcsLockRegistry r, String name, Duration maxWait) throws InterruptedException {
            try {
                return acquired(r, r.acquire(name, maxWait));
            } catch (IllegalStateException | GcsLockException e) { // not acquired in time, closed, GCS unreachable
                return null;
            }
        }

        private Lease acquired(GcsLockRegistry r, Lease lease) {
            Held mine = new Held(r, lease);
            synchronized (held) {
                for (Held other : held) {
                    if (other.lease.name().equals(lease.name()) && other.lease.fencingToken() != lease.fencingToken()
                            && !other.releaseAsked && !other.lostStarted) {
                        violations.add("acquire of " + mine + " returned before " + other + " was told lost"
                                + " (healthy: " + healthy(other.lease) + ")");
                    }
                }
                held.add(mine);
            }
            if (closed.contains(r)) {
                mine.releaseAsked = true;
            }
            return lease;
        }

        /** Holds {@code lease} (if any) for {@code d} of virtual time, then releases it. */
        void hold(Lease lease, Duration d) throws InterruptedException {
            if (lease == null) {
                return;
            }
            try {
                world.sleepVirtual(d);
            } finally {
                release(lease);
            }
        }

        void release(Lease lease) {
            Held h = find(lease);
            h.releaseAsked = true;
            h.releaseRunning = true;
            long started = world.nanoTime();
            try {
                lease.release();
            } finally {
                h.releaseRunning = false;
            }
            // Also when close() is releasing it on another thread: release() returns only once that release has ended
            // (or it waited its whole bound for it, see RELEASE_BOUND).
            boolean withinBound = world.nanoTime() - started < RELEASE_BOUND.toNanos();
            if (!faults && !h.lease.lostReason().isPresent() && withinBound) {
                Blob b = bucket.peek("gcslock/" + lease.name());
                if (b != null && b.getGeneration() == lease.fencingToken()) {
                    violations.add("release() of " + h + " returned with its object still in the bucket");
                }
            }
        }

        void renew(GcsLockRegistry r, Lease lease, Duration ttl) {
            try {
                r.renew(lease, ttl);
            } catch (GcsLockException e) {
                // lost or not confirmed now: documented
            }
        }

        void closeAfter(GcsLockRegistry r, Duration d) throws InterruptedException {
            world.sleepVirtual(d);
            closed.add(r);
            synchronized (held) {
                held.stream().filter(h -> h.registry == r).forEach(h -> h.releaseAsked = true);
            }
            long started = world.nanoTime();
            r.close();
            boolean withinBound = world.nanoTime() - started < RELEASE_BOUND.toNanos();
            if (!faults) {
                List<Held> handedOut;
                synchronized (held) {
                    handedOut = new ArrayList<>(held);
                }
                for (Held h : handedOut) {
                    Blob b = bucket.peek("gcslock/" + h.lease.name());
                    // Also a lease whose release() the application is running on its own thread: close() waits for it
                    // (unless close() waited its whole bound for it, see RELEASE_BOUND).
                    if (h.registry == r && b != null && b.getGeneration() == h.lease.fencingToken()
                            && (!h.releaseRunning || withinBound)) {
                        violations.add("close() of " + names.get(r) + " returned with " + h + " still in the bucket"
                                + (h.releaseRunning ? " (the application's release() of it was running)" : ""));
                    }
                }
            }
        }

        /**
         * {@link Lease#isHealthy()} without its side effect: called from the explorer's own thread, it must not
         * declare the lease lost (that would raise the lost event from an uncontrolled thread).
         */
        boolean healthy(Lease lease) {
            GcsLease g = lease instanceof ReentrantHold hold ? hold.lease() : (GcsLease) lease;
            return g.state() == GcsLease.State.ACTIVE && !g.isReleasing() && world.nanoTime() - g.deadlineNanos() < 0;
        }

        private Held find(Lease lease) {
            synchronized (held) {
                return held.stream().filter(h -> h.lease == lease).findFirst().orElseThrow();
            }
        }

        /** At most one healthy holder per name, among the leases the application still holds. */
        void check() {
            Map<String, Set<Long>> healthy = new java.util.HashMap<>();
            synchronized (held) {
                for (Held h : held) {
                    if (!h.releaseAsked && healthy(h.lease)) {
                        healthy.computeIfAbsent(h.lease.name(), n -> new HashSet<>()).add(h.lease.fencingToken());
                    }
                }
            }
            healthy.forEach((name, tokens) -> {
                if (tokens.size() > 1) {
                    violations.add("two healthy holders of '" + name + "': " + tokens);
                }
            });
            if (!violations.isEmpty()) {
                throw new AssertionError(String.join("; ", violations));
            }
        }

        void go(String scenario) {
            try {
                world.explore(4000, Duration.ofSeconds(120), this::check);
                List<String> problems = new ArrayList<>(violations);
                for (VirtualWorld.Actor a : world.actors()) {
                    if (a.failure != null) {
                        problems.add("actor " + a.name + " failed: " + a.failure);
                    }
                }
                if (!faults && closed.containsAll(registries) && !bucket.names().isEmpty()) {
                    problems.add("every registry closed, yet the bucket holds " + bucket.names());
                }
                if (!problems.isEmpty()) {
                    throw new AssertionError("seed " + world.seed + " (" + scenario + "): " + String.join("; ", problems)
                            + "\nschedule:\n" + String.join("\n", world.trace()));
                }
            } finally {
                registries.forEach(GcsLockRegistry::close);
            }
            assertThat(world.actors()).allMatch(a -> a.done);
        }
    }
}
