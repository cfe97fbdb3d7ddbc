package io.github.gcslock.benchmarks;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.IntToDoubleFunction;

/** The PNG plots of a run: one line per system over a configuration axis. */
final class Plots {

    private Plots() {
    }

    /** Handoff gap p50 of the contention runs against the number of contenders. */
    static void handoff(Map<Integer, Map<String, Double>> p50, Path file) throws Exception {
        XYChart chart = lines("Handoff gap (release to next acquire), p50, one-write-per-second limit on",
                "contenders", "handoff gap p50 (ms)", p50);
        reference(chart, "floor: 1 s (one write per second)", p50.keySet(), x -> HandoffScenario.FLOOR_MS);
        save(chart, file);
    }

    /** Requests per acquisition of the contention runs against the number of contenders. */
    static void requestsPerAcquisition(Map<Integer, Map<String, Double>> requests, Path file) throws Exception {
        save(lines("GCS requests per acquisition, one hot lock, one-write-per-second limit on",
                "contenders", "requests per acquisition", requests), file);
    }

    /** GCS requests per cron tick against the number of instances. */
    static void requestsPerTick(Map<Integer, Map<String, Double>> mean, Path file) throws Exception {
        XYChart chart = lines("GCS requests per cron tick (one SKIP lock, arrivals spread over 50 ms), mean",
                "instances", "requests per tick", mean);
        reference(chart, "2N (goal: at most)", mean.keySet(), x -> 2.0 * x);
        save(chart, file);
    }

    /** A dashed line without markers for a bound the goals refer to. */
    private static void reference(XYChart chart, String name, Set<Integer> xs, IntToDoubleFunction y) {
        if (xs.isEmpty()) {
            return;
        }
        List<Integer> sorted = new ArrayList<>(new TreeSet<>(xs));
        List<Double> ys = sorted.stream().map(x -> y.applyAsDouble(x)).toList();
        XYSeries s = chart.addSeries(name, sorted, ys);
        s.setMarker(SeriesMarkers.NONE);
        s.setLineStyle(SeriesLines.DASH_DASH);
        s.setLineColor(Color.GRAY);
    }

    private static XYChart lines(String title, String x, String y, Map<Integer, Map<String, Double>> values) {
        XYChart chart = new XYChartBuilder().width(800).height(500).title(title).xAxisTitle(x).yAxisTitle(y).build();
        for (String system : List.of("ours", "naive", "shedlock")) {
            List<Integer> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            new TreeMap<>(values).forEach((c, m) -> {
                Double v = m.get(system);
                if (v != null && !v.isNaN()) {
                    xs.add(c);
                    ys.add(v);
                }
            });
            if (!xs.isEmpty()) {
                chart.addSeries(label(system), xs, ys);
            }
        }
        return chart;
    }

    private static String label(String system) {
        return switch (system) {
            case "ours" -> "gcslock";
            case "naive" -> "naive (gcslock-style)";
            default -> "ShedLock-style";
        };
    }

    private static void save(XYChart chart, Path file) throws Exception {
        if (chart.getSeriesMap().isEmpty()) {
            return; // nothing measured (e.g. the scenario was left out)
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        System.out.println("wrote " + file);
    }
}
