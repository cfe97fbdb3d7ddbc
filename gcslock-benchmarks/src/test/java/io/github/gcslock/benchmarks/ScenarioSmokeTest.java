package io.github.gcslock.benchmarks;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each multi-process scenario at its smallest size: it runs, prints RESULT lines of the documented shape, and
 * what it measures holds (one run per cron tick, every failover elects a new leader). Figures are not
 * asserted: timing goals live in the benchmark's output, not in tests.
 */
class ScenarioSmokeTest {

    private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\S+)");

    static Map<String, String> fields(String line) {
        Matcher m = FIELD.matcher(line);
        Map<String, String> f = new java.util.LinkedHashMap<>();
        while (m.find()) {
            f.put(m.group(1), m.group(2));
        }
        return f;
    }

    @Test
    void cronTickRunsTheJobExactlyOncePerTickOnEverySystem() throws Exception {
        Bench.Results results = new Bench.Results();
        new CronTickScenario(results, new int[]{3}, 3).run();

        List<String> lines = results.lines();
        assertThat(lines).hasSize(3).allMatch(l -> l.startsWith("RESULT cron-tick system="));
        assertThat(lines.stream().map(l -> fields(l).get("system")).collect(Collectors.toList()))
                .containsExactly("ours", "naive", "shedlock");
        for (String line : lines) {
            Map<String, String> f = fields(line);
            assertThat(f).containsEntry("instances", "3").containsEntry("ticks", "3")
                    .containsEntry("runs_min", "1").containsEntry("runs_max", "1").containsEntry("violations", "0")
                    .containsKeys("requests_per_tick_mean", "all_decided_p50_ms", "all_decided_p99_rtt");
            // every instance asks GCS at least once per tick, and the winner releases
            assertThat(Double.parseDouble(f.get("requests_per_tick_mean"))).isGreaterThanOrEqualTo(4);
        }
    }

    @Test
    void handoffRunStopsAtItsTargetAndMeasuresEveryGap() throws Exception {
        Bench.Results results = new Bench.Results();
        HandoffScenario scenario = new HandoffScenario(results);
        List<HandoffScenario.Config> configs = List.of(
                new HandoffScenario.Config("contention", "ours", 2, 5, 3, Duration.ofSeconds(60)),
                new HandoffScenario.Config("long-waiters", "naive", 2, 5, 3, Duration.ofSeconds(60)));
        List<HandoffScenario.Outcome> outcomes = scenario.run(configs);

        assertThat(outcomes).allSatisfy(o -> {
            assertThat(o.acquisitions()).isEqualTo(3);
            assertThat(o.gaps().n()).isEqualTo(2);
            // one create and one delete per acquisition at least
            assertThat(o.requestsPerAcquisition()).isGreaterThanOrEqualTo(2);
        });
        assertThat(results.lines()).hasSize(2);
        assertThat(fields(results.lines().get(0))).containsEntry("system", "ours").containsEntry("handoff_n", "2")
                .containsKeys("handoff_p50_ms", "handoff_p95_ms", "handoff_p99_ms", "requests_per_acquisition");
        assertThat(results.lines().get(1)).startsWith("RESULT long-waiters system=naive ");
    }

    @Test
    void everyFailoverElectsANewLeader() throws Exception {
        Bench.Results results = new Bench.Results();
        new LeaderElectionScenario(results, Duration.ofSeconds(2), 1, 1).run();

        List<String> lines = results.lines();
        assertThat(lines).hasSize(3);
        Map<String, String> steady = fields(lines.get(0));
        assertThat(steady).containsEntry("phase", "steady").containsEntry("candidates", "3")
                .containsEntry("leader_changes", "0").containsKeys("requests_per_min_leader", "requests_per_min_followers");
        assertThat(Double.parseDouble(steady.get("requests_per_min_leader"))).isPositive(); // the lease refreshes
        assertThat(fields(lines.get(1))).containsEntry("phase", "crash").containsEntry("failovers", "1")
                .containsEntry("no_new_leader", "0");
        assertThat(fields(lines.get(2))).containsEntry("phase", "graceful").containsEntry("failovers", "1")
                .containsEntry("no_new_leader", "0");
    }

    @Test
    void heldScaleRefreshesEveryLeaseAndReportsItsFigures() throws Exception {
        Bench.Results results = new Bench.Results();
        HeldScaleScenario scenario = new HeldScaleScenario(results);
        // TTLs long enough that a GCS call (bounded to TTL/3, its read timeout too) does not time out on a loaded
        // machine: with 2 s (a 666 ms bound) the in-process emulator's replies came too late ("Read timed out").
        // The head-of-line lease's replies stay slower than its bound (half the TTL against a third).
        scenario.run(List.of(
                new HeldScaleScenario.Config("held-scale", 20, 5, 5, Duration.ofSeconds(10), 0, Duration.ZERO, 2),
                new HeldScaleScenario.Config("held-scale-head-of-line", 20, 5, 5, Duration.ofSeconds(12), 1,
                        Duration.ofSeconds(6), 2)));

        List<String> lines = results.lines();
        assertThat(lines).hasSize(2);
        Map<String, String> held = fields(lines.get(0));
        assertThat(lines.get(0)).startsWith("RESULT held-scale leases=20 ");
        assertThat(held).containsEntry("never_refreshed", "0").containsEntry("lost", "0")
                .containsKeys("refreshes_per_interval", "refresh_lag_p50_ms", "refresh_lag_p99_ms", "threads_peak",
                        "refresh_threads_peak", "heap_bytes_per_lease", "usd_per_month");
        assertThat(Double.parseDouble(held.get("refreshes_per_interval"))).isPositive();
        Map<String, String> hol = fields(lines.get(1));
        assertThat(lines.get(1)).startsWith("RESULT held-scale-head-of-line leases=20 ");
        assertThat(hol).containsEntry("slow_leases", "1").containsEntry("lost", "0").containsEntry("never_refreshed", "0")
                .containsKeys("lag_max_over_rtt");
    }
}
