package io.github.gcslock.autoconfigure;

import com.google.cloud.storage.Storage;
import io.github.gcslock.test.Faults;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The set-up the auto-configuration tests share: a GCS emulator of the test class's own (started before its
 * first test, stopped after its last) holding the bucket {@code locks}, and an {@link ApplicationContextRunner}
 * with gcslock's emulator and registry auto-configurations pointed at it. Register it as
 * {@code @RegisterExtension static final EmulatorFixture gcs = new EmulatorFixture();}.
 */
final class EmulatorFixture implements BeforeAllCallback, AfterAllCallback {

    /** The bucket every runner's {@code gcslock.bucket} names. */
    static final String BUCKET = "locks";

    private final String[] otherBuckets;
    private GcsEmulator emulator;

    /** @param otherBuckets buckets to create besides {@link #BUCKET} */
    EmulatorFixture(String... otherBuckets) {
        this.otherBuckets = otherBuckets;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        emulator = GcsEmulator.start();
        emulator.createBucket(BUCKET);
        for (String bucket : otherBuckets) {
            emulator.createBucket(bucket);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        emulator.close();
    }

    /**
     * A runner with {@link GcsLockEmulatorAutoConfiguration}, {@link GcsLockAutoConfiguration} and
     * {@code autoConfigurations}, on this emulator's {@link #BUCKET}.
     */
    ApplicationContextRunner runner(Class<?>... autoConfigurations) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcsLockAutoConfiguration.class))
                .withConfiguration(AutoConfigurations.of(autoConfigurations))
                .withPropertyValues("gcslock.emulator.endpoint=" + endpoint(), "gcslock.bucket=" + BUCKET);
    }

    String endpoint() {
        return emulator.endpoint();
    }

    /** A client of this emulator of the test's own, apart from any the application context creates. */
    Storage storage() {
        return emulator.storage();
    }

    Faults faults() {
        return emulator.faults();
    }
}
