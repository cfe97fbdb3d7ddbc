package io.github.gcslock;

import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;

/**
 * The emulator with GCS's per-object write limit on (a 300 ms window, rule 21) and a registry that waits it out, for
 * the write-window tests.
 */
abstract class WriteWindowTestBase extends EmulatorTestBase {

    static final Duration WINDOW = Duration.ofMillis(300);

    @BeforeEach
    void windowOn() {
        gcs.writeRateLimit(WINDOW);
    }

    GcsLockRegistry windowed() {
        return registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(50))
                .operationTimeout(Duration.ofSeconds(1)).writeRateWindow(WINDOW));
    }
}
