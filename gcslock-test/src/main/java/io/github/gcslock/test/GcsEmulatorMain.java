package io.github.gcslock.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the emulator on its own, so several application instances on one host can share it:
 * {@code java -cp gcslock-test.jar:... io.github.gcslock.test.GcsEmulatorMain --port 4443 --bucket locks}.
 * Options: {@code --port N} (default 4443), {@code --bucket NAME} (repeatable; default {@code gcslock}),
 * {@code --write-rate-limit} (GCS's one write per second per object), {@code --latency-ms MIN[,MAX]}.
 */
public final class GcsEmulatorMain {

    private GcsEmulatorMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        int port = 4443;
        List<String> buckets = new ArrayList<>();
        boolean rateLimit = false;
        long latMin = 0;
        long latMax = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(value(args, ++i, "--port"));
                case "--bucket" -> buckets.add(value(args, ++i, "--bucket"));
                case "--write-rate-limit" -> rateLimit = true;
                case "--latency-ms" -> {
                    String[] v = value(args, ++i, "--latency-ms").split(",");
                    latMin = Long.parseLong(v[0]);
                    latMax = v.length > 1 ? Long.parseLong(v[1]) : latMin;
                }
                case "--help", "-h" -> {
                    System.out.println("usage: GcsEmulatorMain [--port N] [--bucket NAME]... [--write-rate-limit] [--latency-ms MIN[,MAX]]");
                    return;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (try --help)");
            }
        }
        if (buckets.isEmpty()) {
            buckets.add("gcslock");
        }
        GcsEmulator emulator = GcsEmulator.start(port);
        buckets.forEach(emulator::createBucket);
        emulator.faults().writeRateLimit(rateLimit).latency(Duration.ofMillis(latMin), Duration.ofMillis(latMax));
        Runtime.getRuntime().addShutdownHook(new Thread(emulator::close, "gcs-emulator-shutdown"));
        System.out.println("GCS emulator listening on " + emulator.endpoint() + " with buckets " + buckets);
        new CountDownLatch(1).await();
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }
}
