package io.github.gcslock.autoconfigure;

import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsLockObservationListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/** The observation listener is wired to Boot's ObservationRegistry, and today's meters keep working beside it. */
class GcsLockObservationAutoConfigurationTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();

    private ApplicationContextRunner runner() {
        return gcs.runner(GcsLockMetricsAutoConfiguration.class, GcsLockObservationAutoConfiguration.class);
    }

    /** With Boot's own observation and metrics auto-configurations: a real meter registry under the observations. */
    private ApplicationContextRunner runnerWithBootsMetrics() {
        return gcs.runner(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                GcsLockMetricsAutoConfiguration.class, GcsLockObservationAutoConfiguration.class);
    }

    @Test
    void observesThroughTheApplicationsObservationRegistry() {
        runner().withUserConfiguration(TestObservations.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(GcsLockObservationListener.class);
            ctx.getBean(LockRegistry.class).tryAcquire("wired").orElseThrow().release();
            TestObservationRegistry observations = ctx.getBean(TestObservationRegistry.class);
            assertThat(observations).hasObservationWithNameEqualTo("gcslock.acquisition").that()
                    .hasHighCardinalityKeyValue("gcslock.name", "wired").hasBeenStopped();
            org.awaitility.Awaitility.await("the hold observation of 'wired' to end as released")
                    .atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(observations).hasObservationWithNameEqualTo("gcslock.hold").that()
                            .hasLowCardinalityKeyValue("gcslock.outcome", "released"));
        });
    }

    @Test
    void noListenerWithoutAnObservationRegistry() {
        runner().run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(GcsLockObservationListener.class));
    }

    @Test
    void withBootsMetricsTodaysMetersStayAndObservationTimersAreAdded() {
        runnerWithBootsMetrics()
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(ObservationRegistry.class).hasSingleBean(GcsLockObservationListener.class);
                    ctx.getBean(LockRegistry.class).tryAcquire("metered").orElseThrow().release();
                    MeterRegistry meters = ctx.getBean(MeterRegistry.class);
                    // Today's names, unchanged (from GcsLockMetrics) ...
                    assertThat(meters.get("gcslock.acquire").tag("outcome", "acquired").timer().count()).isEqualTo(1);
                    // ... and the observations' own timers beside them, under names that do not clash.
                    assertThat(meters.get("gcslock.acquisition").tag("gcslock.outcome", "acquired").tag("gcslock.mode", "try")
                            .timer().count()).isEqualTo(1);
                    org.awaitility.Awaitility.await("the hold timer of 'metered' to count its release")
                            .atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() ->
                            assertThat(meters.get("gcslock.hold").tag("gcslock.outcome", "released").timer().count()).isEqualTo(1));
                });
    }

    @Test
    void bootsObservationSwitchTurnsThemOff() {
        runnerWithBootsMetrics()
                .withPropertyValues("management.observations.enable.gcslock=false")
                .run(ctx -> {
                    ctx.getBean(LockRegistry.class).tryAcquire("switched-off").orElseThrow().release();
                    MeterRegistry meters = ctx.getBean(MeterRegistry.class);
                    assertThat(meters.find("gcslock.acquisition").timer()).isNull();
                    assertThat(meters.get("gcslock.acquire").tag("outcome", "acquired").timer().count()).isEqualTo(1);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class TestObservations {
        @Bean
        TestObservationRegistry observationRegistry() {
            return TestObservationRegistry.create();
        }
    }
}
