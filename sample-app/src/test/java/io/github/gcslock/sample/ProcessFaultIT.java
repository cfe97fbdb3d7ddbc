package io.github.gcslock.sample;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockInfo;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Process faults with real separate JVMs: the packaged sample holds the long job's lock; this test
 * kills it (-9), stops it gracefully (SIGTERM), or freezes it (SIGSTOP past its TTL, then SIGCONT),
 * and contends for the lock from this JVM. Prints the measured times.
 */
class ProcessFaultIT {

    private static final Path JAR = Path.of("target", "sample-app.jar");
    private static final String JOB = "long-migration";
    /** How long a child JVM may take to start and take the lock: generous, for a loaded machine. */
    private static final Duration CHILD_START = Duration.ofSeconds(300);
    /** How long the contender may wait for the lock after the holder's fault: a liveness bound (the time is printed). */
    private static final Duration TAKEOVER_BOUND = Duration.ofSeconds(120);

    private GcsEmulator gcs;
    private GcsLockRegistry contender;
    private final AtomicInteger takeovers = new AtomicInteger();
    private final List<Process> processes = new ArrayList<>();

    @BeforeEach
    void start() {
        gcs = GcsEmulator.start();
        gcs.createBucket("gcslock");
        // The children hold with a 2 s TTL (what is measured); the contender's own lease only has to stay healthy,
        // so it gets a TTL and a GCS call bound (read timeout) that a loaded machine does not run out of.
        contender = GcsLockRegistry.builder(gcs.storage(), "gcslock").ttl(Duration.ofSeconds(30))
                .operationTimeout(Duration.ofSeconds(10)).writeRateWindow(Duration.ofMillis(20)).backoff(Duration.ofMillis(20), Duration.ofMillis(100), 2)
                .listener(new LockEventListener() {
                    @Override
                    public void tookOver(String name, LockInfo staleHolder) {
                        takeovers.incrementAndGet();
                    }
                }).build();
    }

    @AfterEach
    void stop() {
        processes.forEach(p -> {
            signal(p, "CONT");
            p.destroyForcibly();
        });
        contender.close();
        gcs.close();
    }

    private record Instance(Process process, int port, Path log) {
        String output() throws IOException {
            return Files.readString(log);
        }
    }

    private Instance holder(String name, String step) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path log = Files.createTempFile("gcslock-" + name, ".log");
        Process p = new ProcessBuilder(javaBin(), "-Xmx256m", "-jar", JAR.toString(),
                "--server.port=" + port, "--spring.application.name=" + name,
                "--gcslock.emulator.embedded=false", "--gcslock.emulator.endpoint=" + gcs.endpoint(),
                "--gcslock.bucket=gcslock", "--gcslock.ttl=2s", "--gcslock.write-rate-window=20ms", "--gcslock.refresh-interval=400ms",
                "--sample.report.interval=1h", "--sample.migration.step=" + step, "--sample.migration.steps=1000",
                "--spring.main.banner-mode=off")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        processes.add(p);
        Instance instance = new Instance(p, port, log);
        // A liveness bound, not a measurement: a child JVM took 59 s to start on a loaded 2-core machine. A GCS
        // call that fails there only means "ask again"; a child that exited will never hold the lock, so that
        // ends the wait at once, naming its log.
        await("child '" + name + "' (log: " + log + ") to start and hold " + JOB)
                .atMost(CHILD_START).pollInterval(Duration.ofMillis(200))
                .failFast("child '" + name + "' exited before holding " + JOB + " (log: " + log + ")", () -> !p.isAlive())
                .ignoreExceptionsInstanceOf(io.github.gcslock.GcsLockException.class).until(() -> {
                    Optional<LockInfo> info = contender.inspect(JOB);
                    return info.isPresent() && info.get().owner().startsWith(name + "@");
                });
        return instance;
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void signal(Process p, String sig) {
        try {
            new ProcessBuilder("bash", "-c", "kill -" + sig + " " + p.pid()).inheritIO().start().waitFor(); // bash builtin: no procps needed
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int healthStatus(int port) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + "/actuator/health").toURL().openConnection();
        c.setConnectTimeout(2000);
        c.setReadTimeout(5000);
        int code = c.getResponseCode();
        var in = code >= 400 ? c.getErrorStream() : c.getInputStream();
        String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        System.out.println("PROCESS health " + code + " " + body.substring(0, Math.min(600, body.length())));
        return code;
    }

    @Test
    void killMinus9OfTheHolder() throws Exception {
        Instance a = holder("victim", "200ms");
        long t0 = System.nanoTime();
        a.process.destroyForcibly().waitFor();
        Lease lease = contender.acquire(JOB, TAKEOVER_BOUND);
        long ms = Duration.ofNanos(System.nanoTime() - t0).toMillis();
        System.out.println("PROCESS kill9_takeover_ms=" + ms + " (ttl 2000 ms, backoff cap 100 ms)");
        assertThat(lease.isHealthy()).isTrue();
        assertThat(takeovers.get()).as("taken over as stale: nobody released it").isEqualTo(1);
    }

    @Test
    void gracefulShutdownHandsTheLockOverWithoutWaitingForTheTtl() throws Exception {
        Instance a = holder("graceful", "200ms");
        long t0 = System.nanoTime();
        a.process.destroy(); // SIGTERM
        Lease lease = contender.acquire(JOB, TAKEOVER_BOUND);
        long ms = Duration.ofNanos(System.nanoTime() - t0).toMillis();
        System.out.println("PROCESS sigterm_takeover_ms=" + ms);
        assertThat(lease.isHealthy()).isTrue();
        assertThat(takeovers.get()).as("released by the holder, not taken over as stale").isZero();
        assertThat(a.process.waitFor()).isNotNull();
    }

    @Test
    void aHolderFrozenPastItsTtlFindsOutAndItsFencedWriteIsRefused() throws Exception {
        // Long steps: the job is inside a step (after its health check, before its write) when frozen.
        Instance a = holder("frozen", "8s");
        Thread.sleep(300);
        signal(a.process, "STOP");
        long t0 = System.nanoTime();
        Lease lease = contender.acquire(JOB, TAKEOVER_BOUND);
        System.out.println("PROCESS sigstop_takeover_ms=" + Duration.ofNanos(System.nanoTime() - t0).toMillis());
        new FencedResultStore(gcs.storage(), "gcslock").write("migration-progress", "by the new holder", lease.fencingToken());
        signal(a.process, "CONT");
        // Resumed mid-step: its lease is past its deadline, so health is DOWN at once (no refresh needed).
        assertThat(healthStatus(a.port)).isEqualTo(503);
        await("child 'frozen' (log: " + a.log + ") to log that the migration stopped before step 2")
                .atMost(Duration.ofSeconds(120)).until(() -> a.output().contains("migration stopped cleanly before step 2"));
        String out = a.output();
        assertThat(out).contains("fenced write of step 1 refused");
        assertThat(out.indexOf("fenced write of step 1 refused")).isLessThan(out.indexOf("migration stopped cleanly before step 2"));
        assertThat(new FencedResultStore(gcs.storage(), "gcslock").read("migration-progress"))
                .containsEntry("content", "by the new holder");
        assertThat(lease.isHealthy()).as("the new holder was never disturbed").isTrue();
    }
}
