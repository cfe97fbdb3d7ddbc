package io.github.gcslock.spring.metrics;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The meters {@link GcsLockMetrics} keeps for the registry's events. */
class GcsLockMetricsTest {

    /** A fencing token that did not increase (the engine's listener callback) is counted, so it can be alerted on. */
    @Test
    void countsFencingTokenRegressions() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        GcsLockMetrics metrics = new GcsLockMetrics(meters);
        assertThat(meters.get("gcslock.fencing.regression").counter().count()).isZero();
        metrics.fencingTokenRegression(null, 42L);
        metrics.fencingTokenRegression(null, 43L);
        assertThat(meters.get("gcslock.fencing.regression").counter().count()).isEqualTo(2.0);
    }
}
