package io.github.gcslock.test;

import com.google.cloud.storage.Storage;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension for users' own tests: starts an emulator with the given buckets before the test
 * class, resets its faults after each test, and stops it after the class. Objects, counters and the
 * emulator's settings ({@link GcsEmulator#writeRateLimit(java.time.Duration)},
 * {@link GcsEmulator#clockOffset(java.time.Duration)}) are kept from one test to the next.
 *
 * <pre>{@code
 * @RegisterExtension
 * static GcsEmulatorExtension gcs = new GcsEmulatorExtension("my-locks");
 *
 * @Test
 * void onlyOneInstanceRuns() {
 *     GcsLockRegistry a = GcsLockRegistry.builder(gcs.storage(), "my-locks").build();
 *     ...
 * }
 * }</pre>
 * With Spring, give {@code gcslock.emulator.endpoint} the value of {@link #endpoint()}.
 */
public final class GcsEmulatorExtension implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

    private final String[] buckets;
    private GcsEmulator emulator;

    /** An extension whose emulator has the given buckets. */
    public GcsEmulatorExtension(String... buckets) {
        this.buckets = buckets;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        emulator = GcsEmulator.start();
        for (String b : buckets) {
            emulator.createBucket(b);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        emulator.faults().reset();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        emulator.close();
    }

    /** The running emulator. */
    public GcsEmulator emulator() {
        return emulator;
    }

    /** A client bound to the emulator. */
    public Storage storage() {
        return emulator.storage();
    }

    /** The emulator's base URL. */
    public String endpoint() {
        return emulator.endpoint();
    }

    /** Fault injection and counters. */
    public Faults faults() {
        return emulator.faults();
    }
}
