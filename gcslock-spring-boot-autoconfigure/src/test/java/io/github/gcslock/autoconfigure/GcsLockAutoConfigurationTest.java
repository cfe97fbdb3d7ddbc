package io.github.gcslock.autoconfigure;

import com.google.cloud.spring.autoconfigure.core.GcpContextAutoConfiguration;
import com.google.cloud.spring.autoconfigure.storage.GcpStorageAutoConfiguration;
import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsIntegrationLockRegistry;
import io.github.gcslock.spring.GcsLockedBeanPostProcessor;
import io.github.gcslock.spring.actuate.GcsLockHealthIndicator;
import io.github.gcslock.spring.actuate.GcsLocksEndpoint;
import io.github.gcslock.spring.metrics.GcsLockMetrics;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

import static org.assertj.core.api.Assertions.assertThat;

/** Every condition and property of the auto-configuration, with ApplicationContextRunner. */
class GcsLockAutoConfigurationTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();

    private ApplicationContextRunner runner() {
        return gcs.runner(GcsLockMetricsAutoConfiguration.class, GcsLockActuatorAutoConfiguration.class,
                GcsLockIntegrationAutoConfiguration.class);
    }

    private static FailureAnalysis analyze(Throwable failure) {
        FailureAnalysis a = new GcsLockFailureAnalyzer().analyze(failure);
        return a != null ? a : new GcsLockStartupFailureAnalyzer().analyze(failure);
    }

    @Test
    void createsARegistryWithTheReferenceDefaults() {
        runner().run(ctx -> {
            assertThat(ctx).hasSingleBean(LockRegistry.class).hasSingleBean(GcsLockRegistry.class);
            GcsLockProperties p = ctx.getBean(GcsLockProperties.class);
            assertThat(p.ttl()).isEqualTo(Duration.ofMinutes(5));
            assertThat(p.refreshInterval()).as("unset: follows the TTL").isNull();
            assertThat(p.maxRefreshFailures()).isEqualTo(3);
            assertThat(p.prefix()).isEqualTo("gcslock/");
            assertThat(p.defaultWait()).isZero();
            assertThat(p.backoff().initial()).isEqualTo(Duration.ofSeconds(1));
            assertThat(p.backoff().max()).isEqualTo(Duration.ofSeconds(30));
            assertThat(p.backoff().multiplier()).isEqualTo(2.0);
            assertThat(p.endpoint().forceReleaseEnabled()).isFalse();
            assertThat(p.writeRateWindow()).isEqualTo(Duration.ofSeconds(1));
            GcsLockRegistry r = ctx.getBean(GcsLockRegistry.class);
            assertThat(r.ttl()).isEqualTo(Duration.ofMinutes(5));
            assertThat(r.refreshInterval()).isEqualTo(Duration.ofSeconds(37));
            assertThat(r.bucket()).isEqualTo("locks");
            assertThat(ctx).hasSingleBean(GcsLockedBeanPostProcessor.class);
        });
    }

    @Test
    void bindsEveryProperty() {
        runner().withPropertyValues("gcslock.prefix=app/locks/", "gcslock.ttl=2m", "gcslock.refresh-interval=15s",
                "gcslock.max-refresh-failures=4", "gcslock.identity=worker-7", "gcslock.wait=5s",
                "gcslock.backoff.initial=200ms", "gcslock.backoff.max=5s", "gcslock.backoff.multiplier=3",
                "gcslock.safety-margin=20s", "gcslock.operation-timeout=4s", "gcslock.write-rate-window=250ms",
                "spring.application.name=billing").run(ctx -> {
            GcsLockRegistry r = ctx.getBean(GcsLockRegistry.class);
            assertThat(r.prefix()).isEqualTo("app/locks/");
            assertThat(r.ttl()).isEqualTo(Duration.ofMinutes(2));
            assertThat(r.owner()).startsWith("worker-7#");
            Lease lease = r.tryAcquire("x").orElseThrow();
            assertThat(r.inspect("x").orElseThrow().application()).isEqualTo("billing");
            assertThat(r.inspect("x").orElseThrow().objectName()).isEqualTo("app/locks/x");
            lease.release();
            assertThat(ctx.getBean(GcsLockProperties.class).defaultWait()).isEqualTo(Duration.ofSeconds(5));
            assertThat(ctx.getBean(GcsLockProperties.class).writeRateWindow()).isEqualTo(Duration.ofMillis(250));
            assertThat(ctx.getBean(GcsLockProperties.class).operationTimeout()).isEqualTo(Duration.ofSeconds(4));
        });
    }

    @Test
    void aUserRegistryWins() {
        runner().withUserConfiguration(UserRegistry.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(LockRegistry.class);
            assertThat(ctx.getBean(LockRegistry.class)).isSameAs(UserRegistry.INSTANCE);
            assertThat(ctx).doesNotHaveBean(GcsLockRegistry.class);
        });
    }

    @Test
    void disabledMeansNoBeans() {
        runner().withPropertyValues("gcslock.enabled=false").run(ctx -> {
            assertThat(ctx).doesNotHaveBean(LockRegistry.class);
            assertThat(ctx).doesNotHaveBean(GcsLockedBeanPostProcessor.class);
            assertThat(ctx).doesNotHaveBean(Storage.class);
        });
    }

    @Test
    void withAnEmptyPrefixForceReleaseStillDeletesOnlyLockObjects() {
        // gcslock.prefix= puts lock objects at the top of the bucket, among whatever else is stored there.
        com.google.cloud.storage.Blob data = gcs.storage().create(com.google.cloud.storage.BlobInfo.newBuilder(
                com.google.cloud.storage.BlobId.of("locks", "data/report.csv")).build(), new byte[]{1, 2, 3});
        runner().withPropertyValues("gcslock.prefix=", "gcslock.endpoint.force-release-enabled=true",
                "management.endpoints.web.exposure.include=gcslocks").run(ctx -> {
            GcsLocksEndpoint endpoint = ctx.getBean(GcsLocksEndpoint.class);
            var refused = endpoint.forceRelease(new String[]{"data", "report.csv"}, String.valueOf(data.getGeneration()),
                    String.valueOf(data.getMetageneration()));
            assertThat(refused.getStatus()).isEqualTo(409);
            assertThat(gcs.storage().get(com.google.cloud.storage.BlobId.of("locks", "data/report.csv"))).isNotNull();
            Lease lease = ctx.getBean(LockRegistry.class).tryAcquire("top-level-job").orElseThrow();
            assertThat(ctx.getBean(LockRegistry.class).inspect("top-level-job").orElseThrow().objectName()).isEqualTo("top-level-job");
            assertThat(endpoint.forceRelease(new String[]{"top-level-job"}, String.valueOf(lease.fencingToken()), null)
                    .getStatus()).isEqualTo(200);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void disabledWithTheUsersOwnRegistryStillServesTheEndpointAndHealth() {
        // gcslock.enabled=false turns off our registry, not the Actuator parts a user's own registry can use:
        // the endpoint needs gcslock.endpoint.* even though GcsLockAutoConfiguration did not run.
        runner().withUserConfiguration(UserRegistry.class)
                .withPropertyValues("gcslock.enabled=false", "management.endpoints.web.exposure.include=gcslocks")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx).hasSingleBean(GcsLocksEndpoint.class).hasSingleBean(GcsLockHealthIndicator.class);
                    assertThat((java.util.Map<String, Object>) ctx.getBean(GcsLocksEndpoint.class).locks().getBody()).containsEntry("count", 0);
                });
    }

    @Test
    void missingBucketFailsWithAMessageNamingTheProperty() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcsLockAutoConfiguration.class))
                .withPropertyValues("gcslock.emulator.endpoint=" + gcs.endpoint())
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    FailureAnalysis a = analyze(ctx.getStartupFailure());
                    assertThat(a.getDescription()).contains("gcslock.bucket");
                    assertThat(a.getAction()).contains("Set gcslock.bucket");
                });
    }

    @Test
    void refreshIntervalTooLongForTheTtlFailsNamingIt() {
        runner().withPropertyValues("gcslock.ttl=60s", "gcslock.refresh-interval=20s").run(ctx -> {
            FailureAnalysis a = analyze(ctx.getStartupFailure());
            assertThat(a.getDescription()).isEqualTo("gcslock is misconfigured: gcslock.refresh-interval (20s) x "
                    + "gcslock.max-refresh-failures (3) must be below gcslock.ttl (1m): a holder must give up before its "
                    + "lock expires; use gcslock.refresh-interval < 20s (property: gcslock.refresh-interval)");
            assertThat(a.getDescription() + a.getAction()).doesNotContain("PT").doesNotContain("refreshInterval")
                    .doesNotContain("README");
            assertThat(a.getAction()).contains("gcslock.ttl / 8");
        });
    }

    @Test
    void settingOnlyTheTtlGivesARefreshIntervalThatFollowsIt() {
        runner().withPropertyValues("gcslock.ttl=1m").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(GcsLockRegistry.class).refreshInterval()).isEqualTo(Duration.ofSeconds(7));
        });
        runner().withPropertyValues("gcslock.ttl=2s", "gcslock.write-rate-window=20ms").run(ctx ->
                assertThat(ctx.getBean(GcsLockRegistry.class).refreshInterval()).isEqualTo(Duration.ofMillis(250)));
    }

    @Test
    void aTtlUnderOneSecondGetsItsOwnMessage() {
        runner().withPropertyValues("gcslock.ttl=10").run(ctx -> {
            FailureAnalysis a = analyze(ctx.getStartupFailure());
            assertThat(a.getDescription()).isEqualTo("gcslock is misconfigured: gcslock.ttl is 10ms, under one second "
                    + "(a number without a unit is read as milliseconds: gcslock.ttl=10 means 10ms); a lock must live for "
                    + "several refreshes, so use at least 1s, e.g. gcslock.ttl=5m (property: gcslock.ttl)");
            assertThat(a.getAction()).contains("gcslock.ttl=5m");
        });
    }

    @Test
    void engineMessagesSpeakInPropertiesAndBootDurations() {
        assertThat(PropertyMessages.translate("safetyMargin (PT1M) must be at least 0 and leave more than one "
                + "refreshInterval (PT0.01S) of the ttl (PT5M)")).isEqualTo("gcslock.safety-margin (1m) must be at least 0 "
                + "and leave more than one gcslock.refresh-interval (10ms) of the gcslock.ttl (5m)");
        assertThat(PropertyMessages.translate("backoff.max (PT1S) must not be below backoff.initial (PT1.5S)"))
                .isEqualTo("gcslock.backoff.max (1s) must not be below gcslock.backoff.initial (1500ms)");
        assertThat(PropertyMessages.translate("prefix 'ttl#PT5S' contains '#'")).isEqualTo("gcslock.prefix 'ttl#PT5S' contains '#'");
        assertThat(PropertyMessages.translate("gcslock.ttl is 10ms")).isEqualTo("gcslock.ttl is 10ms");
        assertThat(PropertyMessages.format(Duration.ofSeconds(37))).isEqualTo("37s");
        assertThat(PropertyMessages.format(Duration.ofMinutes(90))).isEqualTo("90m");
        assertThat(PropertyMessages.format(Duration.ofMillis(-10))).isEqualTo("-10ms");
        assertThat(PropertyMessages.format(Duration.ofMillis(1500))).as("exact: as it is").isEqualTo("1500ms");
        assertThat(PropertyMessages.format(Duration.ofSeconds(5).dividedBy(3))).as("rounded down, two digits").isEqualTo("1600ms");
        assertThat(PropertyMessages.format(Duration.ofSeconds(1).dividedBy(3))).isEqualTo("330ms");
        assertThat(PropertyMessages.format(Duration.ofNanos(1234))).isEqualTo("1200ns");
    }

    @Test
    void nonPositiveDurationsFailNamingTheProperty() {
        runner().withPropertyValues("gcslock.ttl=0s").run(ctx ->
                assertThat(analyze(ctx.getStartupFailure()).getDescription()).contains("(property: gcslock.ttl)"));
        runner().withPropertyValues("gcslock.backoff.initial=-1s").run(ctx ->
                assertThat(analyze(ctx.getStartupFailure()).getDescription()).contains("gcslock.backoff.initial"));
        runner().withPropertyValues("gcslock.backoff.max=10ms").run(ctx ->
                assertThat(analyze(ctx.getStartupFailure()).getDescription()).contains("gcslock.backoff.max"));
        runner().withPropertyValues("gcslock.max-refresh-failures=0").run(ctx ->
                assertThat(analyze(ctx.getStartupFailure()).getDescription()).contains("gcslock.max-refresh-failures"));
    }

    @Test
    void aBucketThatDoesNotExistIsExplained() {
        runner().withPropertyValues("gcslock.bucket=missing-bucket").run(ctx -> {
            FailureAnalysis a = analyze(ctx.getStartupFailure());
            assertThat(a.getDescription()).contains("bucket 'missing-bucket' does not exist");
            assertThat(a.getAction()).contains("gcslock.bucket");
        });
    }

    @Test
    void reusesTheApplicationsStorageBeanAndCreatesNoOther() {
        gcs.faults().resetCounters();
        runner().withPropertyValues("gcslock.emulator.endpoint=").withUserConfiguration(UserStorage.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(Storage.class);
            ctx.getBean(LockRegistry.class).tryAcquire("reuse").orElseThrow().release();
            assertThat(gcs.faults().requestCount(Operation.INSERT)).isEqualTo(1);
        });
    }

    @Test
    void worksBesideSpringCloudGcpWithoutCredentialsWhenPointedAtAnEmulator() {
        runner().withConfiguration(AutoConfigurations.of(GcpContextAutoConfiguration.class, GcpStorageAutoConfiguration.class))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx).hasSingleBean(Storage.class);
                    assertThat(ctx.getBean(LockRegistry.class).tryAcquire("gcp")).isPresent();
                });
    }

    @Test
    void metricsWhenAMeterRegistryIsPresent() {
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(ctx -> {
            assertThat(ctx).hasSingleBean(GcsLockMetrics.class);
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            ctx.getBeansOfType(io.micrometer.core.instrument.binder.MeterBinder.class).values().forEach(b -> b.bindTo(meters));
            LockRegistry r = ctx.getBean(LockRegistry.class);
            Lease lease = r.tryAcquire("metered").orElseThrow();
            assertThat(meters.get("gcslock.held").gauge().value()).isEqualTo(1.0);
            double interval = ctx.getBean(GcsLockRegistry.class).refreshInterval().toMillis() / 1000.0;
            assertThat(meters.get("gcslock.refresh.rate").gauge().value()).as("one write per refresh interval")
                    .isCloseTo(1 / interval, org.assertj.core.api.Assertions.within(1e-6));
            assertThat(meters.get("gcslock.acquire").tag("outcome", "acquired").timer().count()).isEqualTo(1);
            lease.release();
            assertThat(meters.get("gcslock.held").gauge().value()).isZero();
            assertThat(meters.get("gcslock.refresh.rate").gauge().value()).isZero();
        });
    }

    @Test
    void healthIndicatorAndEndpointWithActuatorAndTheirSwitches() {
        runner().run(ctx -> {
            assertThat(ctx).hasSingleBean(GcsLockHealthIndicator.class);
        });
        runner().withPropertyValues("management.health.gcsLock.enabled=false").run(ctx ->
                assertThat(ctx).doesNotHaveBean(GcsLockHealthIndicator.class));
        runner().withPropertyValues("management.endpoints.web.exposure.include=gcslocks").run(ctx ->
                assertThat(ctx).hasSingleBean(GcsLocksEndpoint.class));
    }

    @Test
    void springIntegrationAdapter() {
        runner().run(ctx -> {
            assertThat(ctx).hasSingleBean(GcsIntegrationLockRegistry.class);
            Lock lock = ctx.getBean(GcsIntegrationLockRegistry.class).obtain("leader");
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        });
    }

    @Test
    void embeddedEmulatorNeedsNoBucket() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcsLockAutoConfiguration.class))
                .withPropertyValues("gcslock.emulator.embedded=true")
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(GcsEmulator.class);
                    assertThat(ctx.getBean(GcsLockRegistry.class).bucket()).isEqualTo("gcslock");
                    assertThat(ctx.getBean(LockRegistry.class).tryAcquire("x")).isPresent();
                });
    }

    @Test
    void embeddedWithoutGcslockTestStopsAtStartUpNamingTheDependency() {
        new ApplicationContextRunner()
                .withClassLoader(new FilteredClassLoader(GcsEmulator.class))
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcpContextAutoConfiguration.class,
                        GcpStorageAutoConfiguration.class, GcsLockAutoConfiguration.class))
                .withPropertyValues("gcslock.emulator.embedded=true", "spring.cloud.gcp.project-id=p")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    FailureAnalysis a = analyze(ctx.getStartupFailure());
                    assertThat(a.getDescription()).isEqualTo("gcslock is misconfigured: gcslock.emulator.embedded=true needs "
                            + "the in-process emulator of io.github.gcslock:gcslock-test, which is not on the class path; "
                            + "gcslock does not fall back to real GCS (property: gcslock.emulator.embedded)");
                    assertThat(a.getAction()).startsWith("Add io.github.gcslock:gcslock-test as an optional dependency (not "
                                    + "compile scope, which would ship the emulator in the production application)")
                            .contains("<artifactId>gcslock-test</artifactId>").contains("<optional>true</optional>")
                            .contains("(Gradle: developmentOnly \"io.github.gcslock:gcslock-test:")
                            .contains("testImplementation alone is not on bootRun's class path").contains("gcslock.emulator.endpoint");
                });
    }

    @Test
    void propertyNamesOfSettings() {
        assertThat(GcsLockFailureAnalyzer.propertyOf("refreshInterval")).isEqualTo("gcslock.refresh-interval");
        assertThat(GcsLockFailureAnalyzer.propertyOf("backoff.max")).isEqualTo("gcslock.backoff.max");
    }

    @Configuration(proxyBeanMethods = false)
    static class UserStorage {
        @Bean
        Storage myStorage() {
            return gcs.storage();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserRegistry {
        static final LockRegistry INSTANCE = new LockRegistry() {
            @Override public Optional<Lease> tryAcquire(String name) { return Optional.empty(); }
            @Override public Lease acquire(String name, Duration maxWait) { throw new UnsupportedOperationException(); }
            @Override public <T, E extends Exception> T withLock(String n, Duration w, io.github.gcslock.LockedCallable<T, E> a) {
                throw new UnsupportedOperationException();
            }
            @Override public Lock obtain(String name) { throw new UnsupportedOperationException(); }
            @Override public Optional<io.github.gcslock.LockInfo> inspect(String name) { return Optional.empty(); }
            @Override public List<io.github.gcslock.LockInfo> list() { return List.of(); }
            @Override public Collection<Lease> heldLeases() { return List.of(); }
            @Override public void releaseAfter(Lease lease, Duration delay) { }
            @Override public boolean forceRelease(String name, long token, long meta) { return false; }
        };

        @Bean
        LockRegistry myRegistry() {
            return INSTANCE;
        }
    }
}
