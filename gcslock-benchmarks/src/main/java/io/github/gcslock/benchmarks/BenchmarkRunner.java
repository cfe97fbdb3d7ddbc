package io.github.gcslock.benchmarks;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Runs every scenario and prints one {@code RESULT} line each:
 * {@code java -jar gcslock-benchmarks/target/gcslock-benchmarks.jar [--quick] [--out DIR] [--only SCENARIO,...]}.
 * Writes {@code handoff-gap.png} and {@code results.txt} to DIR (default: current directory).
 */
public final class BenchmarkRunner {

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
                        + "; usage: [--quick] [--out DIR] [--only uncontended,contention,in-process,held-scale,aspect]");
            }
        }
        long t0 = System.nanoTime();
        System.out.printf("gcslock benchmarks (%s) on %d cores, %s %s%n", quick ? "quick" : "full",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.name"), System.getProperty("java.version"));
        Scenarios s = new Scenarios(quick);
        if (only.isEmpty() || only.contains("uncontended")) {
            s.uncontended();
        }
        if (only.isEmpty() || only.contains("contention")) {
            s.contention();
            plot(s.handoffP50, out.resolve("handoff-gap.png"));
        }
        if (only.isEmpty() || only.contains("in-process")) {
            s.inProcess();
        }
        if (only.isEmpty() || only.contains("held-scale")) {
            s.heldScale();
        }
        if (only.isEmpty() || only.contains("aspect")) {
            aspect(s, quick);
        }
        Files.createDirectories(out);
        Files.write(out.resolve("results.txt"), s.results());
        System.out.printf("done in %.0f s%n", (System.nanoTime() - t0) / 1e9);
        System.exit(0);
    }

    private static void aspect(Scenarios s, boolean quick) throws Exception {
        Options opt = new OptionsBuilder()
                .include(AspectBenchmark.class.getName())
                .forks(quick ? 0 : 1)
                .warmupIterations(quick ? 2 : 5).warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 3 : 10).measurementTime(TimeValue.seconds(1))
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opt).run();
        Map<String, Double> ns = new TreeMap<>();
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            ns.put(name.substring(name.lastIndexOf('.') + 1), r.getPrimaryResult().getScore());
        }
        double bare = ns.getOrDefault("bareCall", Double.NaN);
        s.result(String.format("aspect bare_call_ns=%.1f reentrant_literal_ns=%.1f reentrant_overhead_ns=%.1f "
                        + "reentrant_spel_ns=%.1f spel_name_extra_ns=%.1f",
                bare, ns.get("reentrantLiteralName"), ns.get("reentrantLiteralName") - bare,
                ns.get("reentrantSpelName"), ns.get("reentrantSpelName") - ns.get("reentrantLiteralName")));
    }

    private static void plot(Map<Integer, Map<String, Double>> p50, Path file) throws Exception {
        XYChart chart = new XYChartBuilder().width(800).height(500)
                .title("Handoff gap (release to next acquire), p50, one-write-per-second limit on")
                .xAxisTitle("contenders").yAxisTitle("handoff gap p50 (ms)").build();
        for (String system : List.of("ours", "naive", "shedlock")) {
            List<Integer> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            new TreeMap<>(p50).forEach((c, m) -> {
                Double v = m.get(system);
                if (v != null && !v.isNaN()) {
                    xs.add(c);
                    ys.add(v);
                }
            });
            if (!xs.isEmpty()) {
                chart.addSeries(system.equals("ours") ? "gcslock" : system.equals("naive") ? "naive (gcslock-style)" : "ShedLock-style", xs, ys);
            }
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        System.out.println("wrote " + file);
    }
}
