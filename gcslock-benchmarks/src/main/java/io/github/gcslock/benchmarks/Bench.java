package io.github.gcslock.benchmarks;

import com.google.api.client.http.javanet.ConnectionFactory;
import com.google.api.client.http.javanet.DefaultConnectionFactory;
import com.google.api.client.http.javanet.NetHttpTransport;
import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/** What every scenario shares: the emulator and clients, percentiles, and the {@code RESULT} lines. */
final class Bench {

    static final String BUCKET = "bench";

    /** Retries bounded to 10 s for every system: the client's own 50 s retries would blur every figure. */
    static final RetrySettings BOUNDED_RETRIES = RetrySettings.newBuilder().setMaxAttempts(50)
            .setInitialRetryDelayDuration(Duration.ofMillis(50)).setMaxRetryDelayDuration(Duration.ofMillis(500))
            .setRetryDelayMultiplier(2).setTotalTimeoutDuration(Duration.ofSeconds(10)).build();

    private Bench() {
    }

    /** A fresh emulator with the benchmark bucket. */
    static GcsEmulator emulator() {
        GcsEmulator gcs = GcsEmulator.start();
        gcs.createBucket(BUCKET);
        return gcs;
    }

    /** A client of its own (as a separate process would have) with {@link #BOUNDED_RETRIES}. */
    static Storage boundedStorage(GcsEmulator gcs) {
        return gcs.storage(BOUNDED_RETRIES);
    }

    /**
     * A client of the emulator endpoint of {@code client} (so that faults can hit it alone) that counts every
     * HTTP request it sends in {@code requests}. It counts at the connection: clients derived from its options,
     * as the lock engine derives its bounded ones, keep the transport and so are counted too.
     */
    static Storage countingStorage(GcsEmulator gcs, String client, AtomicLong requests) {
        ConnectionFactory direct = new DefaultConnectionFactory();
        ConnectionFactory counting = url -> {
            requests.incrementAndGet();
            return direct.openConnection(url);
        };
        HttpTransportOptions transport = HttpTransportOptions.newBuilder()
                .setHttpTransportFactory(() -> new NetHttpTransport.Builder().setConnectionFactory(counting).build())
                .build();
        return gcs.options(client).setTransportOptions(transport).setRetrySettings(BOUNDED_RETRIES).build().getService();
    }

    /** Sleeps until {@code System.nanoTime()} reaches {@code deadlineNanos}. */
    static void sleepUntil(long deadlineNanos) {
        long left;
        while ((left = deadlineNanos - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /**
     * Object requests per unit (acquisition, tick) of each operation used, e.g. {@code GET:7.1,INSERT:3.0,DELETE:1.2};
     * bucket requests are left out, as in {@code Faults#objectRequests()}.
     */
    static String perOperation(Map<Operation, Long> counts, long units) {
        StringBuilder sb = new StringBuilder();
        counts.forEach((op, count) -> {
            if (count > 0 && !op.name().startsWith("BUCKET_")) {
                sb.append(sb.isEmpty() ? "" : ",").append(op.name())
                        .append(String.format(":%.2f", (double) count / Math.max(1, units)));
            }
        });
        return sb.isEmpty() ? "-" : sb.toString();
    }

    /** Sums per-operation counts (e.g. of every tick). */
    static Map<Operation, Long> sum(Collection<Map<Operation, Long>> counts) {
        Map<Operation, Long> total = new EnumMap<>(Operation.class);
        counts.forEach(c -> c.forEach((op, n) -> total.merge(op, n, Long::sum)));
        return total;
    }

    /** Nearest-rank percentile; NaN for no values. */
    static double percentile(double[] values, double p) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int idx = (int) Math.ceil(p / 100.0 * v.length) - 1;
        return v[Math.max(0, Math.min(v.length - 1, idx))];
    }

    static double[] toArray(Collection<? extends Number> values) {
        return values.stream().mapToDouble(Number::doubleValue).toArray();
    }

    /** Sample size, mean, p50/p95/p99 and max of a set of figures. */
    record Stats(int n, double mean, double p50, double p95, double p99, double max) {

        static Stats of(double[] v) {
            return new Stats(v.length, Arrays.stream(v).average().orElse(Double.NaN), percentile(v, 50),
                    percentile(v, 95), percentile(v, 99), Arrays.stream(v).max().orElse(Double.NaN));
        }

        static Stats of(Collection<? extends Number> v) {
            return of(toArray(v));
        }
    }

    /** The {@code RESULT} lines of a run, printed as they come and kept for {@code results.txt}. */
    static final class Results {

        private final List<String> lines = Collections.synchronizedList(new ArrayList<>());

        void add(String line) {
            String l = "RESULT " + line;
            lines.add(l);
            System.out.println(l);
        }

        List<String> lines() {
            synchronized (lines) {
                return List.copyOf(lines);
            }
        }
    }
}
