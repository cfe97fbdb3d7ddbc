package io.github.gcslock.test;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the emulator on its own, so several application instances (or a container) can share it:
 * <pre>
 * ./mvnw -B -pl gcslock-test -am package -DskipTests
 * java -jar gcslock-test/target/gcslock-test-*-emulator.jar --port 4443 --bucket locks --bucket uploads
 * </pre>
 * Options: {@code --port N} (default 4443; 0 picks a free port), {@code --bucket NAME} (repeatable;
 * default {@code gcslock}), {@code --host ADDRESS} (default {@code 127.0.0.1}; {@code 0.0.0.0} listens on
 * all interfaces, e.g. in a container), {@code --write-rate-limit} (GCS's one write per second per
 * object), {@code --latency-ms MIN[,MAX]}.
 */
public final class GcsEmulatorMain {

    static final String USAGE = "usage: java -jar gcslock-test-<version>-emulator.jar [--port N] [--bucket NAME]... "
            + "[--host ADDRESS] [--write-rate-limit] [--latency-ms MIN[,MAX]]\n"
            + "  --port N             port to listen on (default 4443; 0 = any free port)\n"
            + "  --bucket NAME        create this bucket at start (repeatable; default: gcslock)\n"
            + "  --host ADDRESS       address to bind (default 127.0.0.1; 0.0.0.0 = all interfaces, e.g. in a container)\n"
            + "  --write-rate-limit   answer 429 to a second write of one object within a second, as GCS does\n"
            + "  --latency-ms MIN[,MAX]  delay every request by a random time in [MIN, MAX] ms";

    private GcsEmulatorMain() {
    }

    /** The parsed command line. */
    record Options(String host, int port, List<String> buckets, boolean writeRateLimit, long latencyMinMs, long latencyMaxMs) {
    }

    /** Starts the emulator as the command line says and runs until the process is stopped (options: see above). */
    public static void main(String[] args) throws InterruptedException {
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("gcs emulator: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (options == null) {
            System.out.println(USAGE);
            return;
        }
        GcsEmulator emulator;
        try {
            emulator = start(options, System.out);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            // e.g. the port is taken or the host unknown: one line, not a stack trace
            System.err.println("gcs emulator: " + e.getMessage()
                    + (e.getCause() != null ? ": " + e.getCause().getMessage() : ""));
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(emulator::close, "gcs-emulator-shutdown"));
        new CountDownLatch(1).await();
    }

    /** Starts an emulator as {@code options} say and prints where it listens and how to use it. */
    static GcsEmulator start(Options options, PrintStream out) {
        InetAddress address;
        try {
            address = InetAddress.getByName(options.host());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--host: unknown host " + options.host(), e);
        }
        GcsEmulator emulator = GcsEmulator.start(address, options.port());
        options.buckets().forEach(emulator::createBucket);
        emulator.writeRateLimit(options.writeRateLimit());
        emulator.faults().latency(Duration.ofMillis(options.latencyMinMs()), Duration.ofMillis(options.latencyMaxMs()));
        String endpoint = emulator.endpoint();
        out.println("GCS emulator listening on " + options.host() + ":" + emulator.port() + " with buckets " + options.buckets());
        out.println("  Spring Boot with gcslock:  --gcslock.emulator.endpoint=" + endpoint);
        out.println("  Java client:               StorageOptions.http().setHost(\"" + endpoint
                + "\").setProjectId(\"test-project\").setCredentials(NoCredentials.getInstance())");
        out.println("  Node.js client:            new Storage({apiEndpoint: '" + endpoint + "', projectId: 'test-project'})");
        out.println("  other clients:             STORAGE_EMULATOR_HOST=" + endpoint);
        out.println("  No authentication; objects live in memory until the process ends.");
        return emulator;
    }

    /** Parses the command line; null for {@code --help}. */
    static Options parse(String[] args) {
        int port = 4443;
        String host = "127.0.0.1";
        List<String> buckets = new ArrayList<>();
        boolean rateLimit = false;
        long latMin = 0;
        long latMax = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> {
                    String v = value(args, ++i, "--port");
                    try {
                        port = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--port needs a number, got '" + v + "'");
                    }
                    if (port < 0 || port > 65535) {
                        throw new IllegalArgumentException("--port must be within 0..65535, got " + port);
                    }
                }
                case "--bucket" -> {
                    String b = value(args, ++i, "--bucket");
                    if (b.isBlank() || b.contains("/")) {
                        throw new IllegalArgumentException("--bucket needs a bucket name, got '" + b + "'");
                    }
                    if (!buckets.contains(b)) {
                        buckets.add(b);
                    }
                }
                case "--host" -> host = value(args, ++i, "--host");
                case "--write-rate-limit" -> rateLimit = true;
                case "--latency-ms" -> {
                    String v = value(args, ++i, "--latency-ms");
                    try {
                        String[] parts = v.split(",");
                        latMin = Long.parseLong(parts[0].trim());
                        latMax = parts.length > 1 ? Long.parseLong(parts[1].trim()) : latMin;
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--latency-ms needs MIN or MIN,MAX in milliseconds, got '" + v + "'");
                    }
                    if (latMin < 0 || latMax < latMin) {
                        throw new IllegalArgumentException("--latency-ms needs 0 <= MIN <= MAX, got '" + v + "'");
                    }
                }
                case "--help", "-h" -> {
                    return null;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (buckets.isEmpty()) {
            buckets.add("gcslock");
        }
        return new Options(host, port, List.copyOf(buckets), rateLimit, latMin, latMax);
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length || args[i].startsWith("--")) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }
}
