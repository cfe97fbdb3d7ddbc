package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.autoconfigure.GcsLockAutoConfiguration;
import io.github.gcslock.autoconfigure.GcsLockEmulatorAutoConfiguration;
import io.github.gcslock.test.GcsEmulator;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** One emulator for the Spring tests of this module; each test class takes its own bucket. */
final class SharedEmulator {

    static final GcsEmulator GCS = GcsEmulator.start();
    private static final AtomicInteger BUCKETS = new AtomicInteger();

    private SharedEmulator() {
    }

    static String newBucket() {
        String name = "bucket-" + BUCKETS.incrementAndGet();
        GCS.createBucket(name);
        return name;
    }

    /** Points a Spring test context at the shared emulator and {@code bucket}. */
    static void register(org.springframework.test.context.DynamicPropertyRegistry r, String bucket) {
        r.add("gcslock.emulator.endpoint", GCS::endpoint);
        r.add("gcslock.bucket", () -> bucket);
    }

    /**
     * A runner with gcslock's emulator and registry auto-configurations and {@code autoConfigurations}, on the
     * shared emulator's {@code bucket}.
     */
    static ApplicationContextRunner runner(String bucket, Class<?>... autoConfigurations) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcsLockAutoConfiguration.class))
                .withConfiguration(AutoConfigurations.of(autoConfigurations))
                .withPropertyValues("gcslock.emulator.endpoint=" + GCS.endpoint(), "gcslock.bucket=" + bucket);
    }

    /**
     * Another instance of the service that holds what it takes for as long as a test needs: a long TTL, since
     * nothing here waits for an expiry and a loaded machine must not time GCS calls out.
     */
    static GcsLockRegistry holdingInstance(String bucket) {
        return GcsLockRegistry.builder(GCS.storage(), bucket).ttl(Duration.ofSeconds(60)).build();
    }

    /** Another instance of the service, as a plain registry on the same bucket. */
    static GcsLockRegistry otherInstance(String bucket) {
        return GcsLockRegistry.builder(GCS.storage(), bucket).ttl(Duration.ofSeconds(2)).writeRateWindow(Duration.ofMillis(20))
                .refreshInterval(Duration.ofMillis(300)).backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2).build();
    }
}
