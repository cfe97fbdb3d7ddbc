package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.test.GcsEmulator;

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

    /** Another instance of the service, as a plain registry on the same bucket. */
    static GcsLockRegistry otherInstance(String bucket) {
        return GcsLockRegistry.builder(GCS.storage(), bucket).ttl(Duration.ofSeconds(2))
                .refreshInterval(Duration.ofMillis(300)).backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2).build();
    }
}
