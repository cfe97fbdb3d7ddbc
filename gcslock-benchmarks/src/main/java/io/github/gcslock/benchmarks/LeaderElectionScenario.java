package io.github.gcslock.benchmarks;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.spring.GcsIntegrationLockRegistry;
import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.GcsEmulator;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Leader election as Spring Integration users do it: {@code LockRegistryLeaderInitiator} with its defaults
 * (500 ms heartbeat: followers call {@code tryLock(500 ms)} then sleep 50 ms, the leader re-enters every
 * 500 ms) on {@link GcsIntegrationLockRegistry}, three candidates, each a registry with a client of its own.
 *
 * <ul>
 * <li>Requests per minute while one leader holds: the goal is the lease's own refreshes (60 / refresh
 * interval), i.e. followers that cost next to nothing.</li>
 * <li>Failover after the leader's process stops without releasing: its client is partitioned for good
 * (every request refused unprocessed), so its lock object stays as it was, as after a crash. Measured from
 * the partition to the next candidate's grant; goal ≤ TTL + backoff cap.</li>
 * <li>Failover after a graceful stop ({@code initiator.stop()}, which releases): from the call to the next
 * grant; goal &lt; 1 s + one write window: the next create must wait out a write window after the delete,
 * and a follower should notice the release within a second.</li>
 * </ul>
 * Each stopped candidate is replaced by a new one, so three candidates always compete.
 */
final class LeaderElectionScenario {

    static final long RTT_MS = 30;
    /** Short so that crash failovers fit in {@code --quick}; refresh interval TTL/8 = 1 s. */
    static final Duration TTL = Duration.ofSeconds(8);
    static final Duration BACKOFF_INITIAL = Duration.ofSeconds(1);
    static final Duration BACKOFF_MAX = Duration.ofSeconds(4);
    static final String ROLE = "report-scheduler";

    private final Bench.Results results;
    private final Duration steadyWindow;
    private final int crashes;
    private final int gracefulStops;
    private final LinkedBlockingQueue<Member> grants = new LinkedBlockingQueue<>();
    private final List<Member> members = new ArrayList<>();
    private int nextId = 1;

    LeaderElectionScenario(Bench.Results results, Duration steadyWindow, int crashes, int gracefulStops) {
        this.results = results;
        this.steadyWindow = steadyWindow;
        this.crashes = crashes;
        this.gracefulStops = gracefulStops;
    }

    /** One candidate: a process with its own client, engine registry, Spring Integration registry and initiator. */
    private final class Member {
        final String name;
        final AtomicLong requests = new AtomicLong();
        final GcsLockRegistry engine;
        final LockRegistryLeaderInitiator initiator;
        volatile boolean leader;

        Member(GcsEmulator gcs, String name) {
            this.name = name;
            this.engine = GcsLockRegistry.builder(Bench.countingStorage(gcs, name, requests), Bench.BUCKET)
                    .verifyBucket(false).ttl(TTL).backoff(BACKOFF_INITIAL, BACKOFF_MAX, 2).build();
            this.initiator = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(engine),
                    new DefaultCandidate(name, ROLE) {
                        @Override
                        public void onGranted(Context ctx) {
                            leader = true;
                            grants.add(Member.this);
                        }

                        @Override
                        public void onRevoked(Context ctx) {
                            leader = false;
                        }
                    });
            initiator.start();
        }

        /** Stops without a word to GCS (the client is partitioned by then); in the background, it may take a while. */
        void abandon() {
            CompletableFuture.runAsync(() -> {
                initiator.stop();
                engine.close();
            });
        }
    }

    void run() throws Exception {
        try (GcsEmulator gcs = Bench.emulator()) {
            gcs.faults().latency(Duration.ofMillis(RTT_MS), Duration.ofMillis(RTT_MS));
            gcs.writeRateLimit(true);
            for (int i = 0; i < 3; i++) {
                members.add(newMember(gcs));
            }
            Member leader = nextGrant(null, Duration.ofSeconds(60));
            if (leader == null) {
                throw new IllegalStateException("no candidate became leader within 60 s");
            }
            Thread.sleep(2000); // the first round of contention settles
            steadyState(gcs, leader);

            List<Double> crashMs = new ArrayList<>();
            long limited = gcs.faults().rateLimited();
            for (int i = 0; i < crashes; i++) {
                if (!failover(gcs, true, crashMs)) {
                    break;
                }
            }
            long crashLimited = gcs.faults().rateLimited() - limited;
            limited = gcs.faults().rateLimited();
            List<Double> gracefulMs = new ArrayList<>();
            for (int i = 0; i < gracefulStops; i++) {
                if (!failover(gcs, false, gracefulMs)) {
                    break;
                }
            }
            long gracefulLimited = gcs.faults().rateLimited() - limited;
            report("crash", crashMs, TTL.plus(BACKOFF_MAX).toMillis(),
                    "ttl_s=" + TTL.toSeconds() + " backoff_cap_s=" + BACKOFF_MAX.toSeconds() + " rate_limited_429=" + crashLimited);
            report("graceful", gracefulMs, 2000, "write_window_s=1 rate_limited_429=" + gracefulLimited);
            for (Member m : members) {
                m.initiator.stop();
                m.engine.close();
            }
        }
    }

    private Member newMember(GcsEmulator gcs) {
        return new Member(gcs, "candidate-" + nextId++);
    }

    private void replace(GcsEmulator gcs, Member stopped, boolean crashed) throws InterruptedException {
        members.remove(stopped);
        if (crashed) {
            stopped.abandon();
        } else {
            stopped.engine.close();
        }
        members.add(newMember(gcs));
        Thread.sleep(1000); // the new candidate joins as a follower
    }

    /**
     * Stops the current leader (a crash: its client partitioned for good; or gracefully) and adds the time until
     * another candidate is granted leadership to {@code times} (NaN if none was). Returns false when there was no
     * leader to stop or none followed, so that the caller stops.
     */
    private boolean failover(GcsEmulator gcs, boolean crash, List<Double> times) throws InterruptedException {
        Member l = currentLeader();
        if (l == null) {
            times.add(Double.NaN);
            return false;
        }
        grants.clear();
        long t0 = System.nanoTime();
        if (crash) {
            gcs.faults().client(l.name).partition(ClientFaults.Partition.FAIL); // for good: never healed
        } else {
            l.initiator.stop(); // releases the lock
        }
        Member next = nextGrant(l, crash ? TTL.plus(BACKOFF_MAX).plusSeconds(30) : Duration.ofSeconds(30));
        times.add(next == null ? Double.NaN : (System.nanoTime() - t0) / 1e6);
        replace(gcs, l, crash);
        return next != null;
    }

    /** The candidate holding leadership now, waiting up to 10 s for one; null if there is none. */
    private Member currentLeader() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        do {
            for (Member m : members) {
                if (m.leader) {
                    return m;
                }
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        return null;
    }

    /** The next candidate other than {@code not} to be granted leadership, or null if none within {@code within}. */
    private Member nextGrant(Member not, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            Member m = grants.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (m == null || m != not) {
                return m;
            }
        }
    }

    private void steadyState(GcsEmulator gcs, Member leader) throws InterruptedException {
        grants.clear();
        long[] before = members.stream().mapToLong(m -> m.requests.get()).toArray();
        long emulatorBefore = gcs.faults().objectRequests();
        long limitedBefore = gcs.faults().rateLimited();
        long t0 = System.nanoTime();
        Thread.sleep(steadyWindow.toMillis());
        double minutes = (System.nanoTime() - t0) / 60e9;
        double emulatorPerMinute = (gcs.faults().objectRequests() - emulatorBefore) / minutes;
        // One lock, and only its leader writes while it holds: every 429 of the window is a write of the leader
        // that GCS's one-write-per-second limit refused (a 429 the engine caused itself).
        double limitedPerMinute = (gcs.faults().rateLimited() - limitedBefore) / minutes;
        StringBuilder followers = new StringBuilder();
        double total = 0;
        double leaders = 0;
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            double perMinute = (m.requests.get() - before[i]) / minutes;
            total += perMinute;
            if (m == leader) {
                leaders = perMinute;
            } else {
                followers.append(followers.isEmpty() ? "" : ",").append(String.format("%.0f", perMinute));
            }
        }
        double refreshSeconds = leader.engine.refreshInterval().toMillis() / 1000.0;
        results.add(String.format("leader-election phase=steady candidates=%d rtt_ms=%d window_s=%.0f leader_changes=%d "
                        + "requests_per_min_total=%.0f requests_per_min_leader=%.0f requests_per_min_followers=%s "
                        + "goal_per_min=%.0f refresh_interval_s=%.1f emulator_requests_per_min=%.0f rate_limited_429_per_min=%.0f",
                members.size(), RTT_MS, minutes * 60, grants.size(), total, leaders, followers, 60 / refreshSeconds,
                refreshSeconds, emulatorPerMinute, limitedPerMinute));
    }

    private void report(String phase, List<Double> ms, long goalMs, String detail) {
        Bench.Stats s = Bench.Stats.of(ms.stream().filter(v -> !v.isNaN()).toList());
        long missed = ms.stream().filter(v -> v.isNaN()).count();
        results.add(String.format("leader-election phase=%s failovers=%d no_new_leader=%d failover_p50_ms=%.0f "
                        + "failover_max_ms=%.0f goal_ms=%d %s",
                phase, s.n(), missed, s.p50(), s.max(), goalMs, detail));
    }
}
