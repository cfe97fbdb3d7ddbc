package io.github.gcslock.benchmarks;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Runs every scenario and prints {@code RESULT} lines:
 * {@code java -jar gcslock-benchmarks/target/gcslock-benchmarks.jar [--quick] [--out DIR] [--only SCENARIO,...]}.
 * Writes {@code results.txt}, {@code handoff-gap.png}, {@code contention-requests.png} and
 * {@code cron-tick-requests.png} to DIR (default: current directory).
 */
public final class BenchmarkRunner {

    static final List<String> SCENARIOS = List.of("uncontended", "cron-tick", "contention", "long-waiters",
            "leader-election", "in-process", "held-scale", "aspect");

    private BenchmarkRunner() {
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        Path out = Path.of(".");
        List<String> only = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--out" -> out = Path.of(args[++i]);
                case "--only" -> only.addAll(List.of(args[++i].split(",")));
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + "; usage: [--quick] [--out DIR] [--only " + String.join(",", SCENARIOS) + "]");
            }
        }
        for (String name : only) {
            if (!SCENARIOS.contains(name)) {
                throw new IllegalArgumentException("unknown scenario '" + name + "' in --only; known: " + String.join(",", SCENARIOS));
            }
        }
        List<String> selected = only.isEmpty() ? SCENARIOS : only;
        long t0 = System.nanoTime();
        System.out.printf("gcslock benchmarks (%s) on %d cores, %s %s%n", quick ? "quick" : "full",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.name"), System.getProperty("java.version"));
        Bench.Results results = new Bench.Results();
        Scenarios s = new Scenarios(results, quick);
        if (selected.contains("uncontended")) {
            s.uncontended();
        }
        if (selected.contains("cron-tick")) {
            CronTickScenario cron = new CronTickScenario(results, new int[]{3, 10, 50}, quick ? 30 : 100);
            cron.run();
            Plots.requestsPerTick(cron.requestsPerTick, out.resolve("cron-tick-requests.png"));
        }
        // Leader election waits out TTLs and write windows, the handoff runs wait out write windows: neither
        // keeps the CPU busy, so they run side by side to keep --quick short.
        CompletableFuture<Void> leader = CompletableFuture.completedFuture(null);
        if (selected.contains("leader-election")) {
            LeaderElectionScenario election = quick
                    ? new LeaderElectionScenario(results, Duration.ofSeconds(20), 5, 5)
                    : new LeaderElectionScenario(results, Duration.ofSeconds(60), 10, 10);
            leader = CompletableFuture.runAsync(() -> {
                try {
                    election.run();
                } catch (Exception e) { // reported, and the other scenarios' results are kept
                    e.printStackTrace();
                    results.add("leader-election failed=" + e.toString().replace(' ', '_'));
                }
            });
        }
        handoff(results, selected, quick, out);
        leader.join();
        if (selected.contains("in-process")) {
            s.inProcess();
        }
        if (selected.contains("held-scale")) {
            new HeldScaleScenario(results).run(HeldScaleScenario.configs(quick));
        }
        if (selected.contains("aspect")) {
            aspect(results, quick);
        }
        Files.createDirectories(out);
        Files.write(out.resolve("results.txt"), results.lines());
        System.out.printf("done in %.0f s%n", (System.nanoTime() - t0) / 1e9);
        System.exit(0);
    }

    /** contention and long-waiters: every configuration side by side (see HandoffScenario). */
    private static void handoff(Bench.Results results, List<String> selected, boolean quick, Path out) throws Exception {
        int acquisitions = quick ? 31 : 101; // 30 (100) handoff gaps
        Duration cap = quick ? Duration.ofSeconds(150) : Duration.ofMinutes(8);
        List<HandoffScenario.Config> configs = new ArrayList<>();
        if (selected.contains("contention")) {
            configs.addAll(HandoffScenario.contention(acquisitions, cap));
        }
        if (selected.contains("long-waiters")) {
            configs.addAll(HandoffScenario.longWaiters(acquisitions, cap));
        }
        if (configs.isEmpty()) {
            return;
        }
        HandoffScenario handoff = new HandoffScenario(results);
        List<HandoffScenario.Outcome> outcomes = handoff.run(configs);
        handoff.reportLongWaiterGoal(outcomes);
        if (selected.contains("contention")) {
            Plots.handoff(handoff.handoffP50, out.resolve("handoff-gap.png"));
            Plots.requestsPerAcquisition(handoff.requestsPerAcquisition, out.resolve("contention-requests.png"));
        }
    }

    private static void aspect(Bench.Results results, boolean quick) throws Exception {
        Options opt = new OptionsBuilder()
                .include(AspectBenchmark.class.getName())
                .forks(quick ? 0 : 1)
                .warmupIterations(quick ? 2 : 5).warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 5 : 10).measurementTime(TimeValue.seconds(1))
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> runs = new Runner(opt).run();
        Map<String, Double> ns = new TreeMap<>();
        for (RunResult r : runs) {
            String name = r.getParams().getBenchmark();
            // The median iteration, not JMH's mean: on a shared machine one iteration that met a burst of
            // other work would otherwise make the figure (and its error bar) meaningless.
            double[] iterations = r.getBenchmarkResults().stream()
                    .flatMap(b -> b.getIterationResults().stream())
                    .mapToDouble(i -> i.getPrimaryResult().getScore()).toArray();
            ns.put(name.substring(name.lastIndexOf('.') + 1), Bench.percentile(iterations, 50));
        }
        double bare = ns.getOrDefault("bareCall", Double.NaN);
        results.add(String.format("aspect bare_call_ns=%.1f reentrant_literal_ns=%.1f reentrant_overhead_ns=%.1f "
                        + "reentrant_spel_ns=%.1f spel_name_extra_ns=%.1f",
                bare, ns.get("reentrantLiteralName"), ns.get("reentrantLiteralName") - bare,
                ns.get("reentrantSpelName"), ns.get("reentrantSpelName") - ns.get("reentrantLiteralName")));
    }
}
