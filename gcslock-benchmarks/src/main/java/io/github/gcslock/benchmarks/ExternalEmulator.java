package io.github.gcslock.benchmarks;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.GcsEmulator;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/** The standalone emulator in a child JVM started from this benchmark's own class path. */
final class ExternalEmulator implements AutoCloseable {

    private final Process process;
    private final String endpoint;

    private ExternalEmulator(Process process, String endpoint) {
        this.process = process;
        this.endpoint = endpoint;
    }

    /** With every request delayed by a uniformly random time in {@code [latencyMinMs, latencyMaxMs]}. */
    static ExternalEmulator start(String bucket, long latencyMinMs, long latencyMaxMs) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx2g",
                "-cp", System.getProperty("java.class.path"), "io.github.gcslock.test.GcsEmulatorMain",
                "--port", Integer.toString(port), "--bucket", bucket, "--latency-ms", latencyMinMs + "," + latencyMaxMs)
                .redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null) {
            if (line.contains("listening")) {
                break;
            }
        }
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // discard
                }
            } catch (Exception ignored) {
                // process ended
            }
        });
        drain.setDaemon(true);
        drain.start();
        return new ExternalEmulator(p, "http://127.0.0.1:" + port);
    }

    Storage storage() {
        return GcsEmulator.optionsFor(endpoint).setRetrySettings(RetrySettings.newBuilder().setMaxAttempts(20)
                .setInitialRetryDelayDuration(Duration.ofMillis(50)).setMaxRetryDelayDuration(Duration.ofMillis(500))
                .setTotalTimeoutDuration(Duration.ofSeconds(10)).build()).build().getService();
    }

    @Override
    public void close() {
        process.destroy();
    }
}
