package io.github.gcslock.autoconfigure;

import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.metrics.GcsLockHeldGauge;
import io.github.gcslock.spring.metrics.GcsLockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/** Micrometer meters for gcslock, when Micrometer and a {@link MeterRegistry} are present. */
@AutoConfiguration(before = GcsLockAutoConfiguration.class,
        afterName = {"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnProperty(prefix = "gcslock", name = "enabled", havingValue = "true", matchIfMissing = true)
public class GcsLockMetricsAutoConfiguration {

    /** Listener the registry reports to; built lazily on the meter registry. */
    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    GcsLockMetrics gcsLockMetrics(MeterRegistry meterRegistry) {
        return new GcsLockMetrics(meterRegistry);
    }

    /** {@code gcslock.held}: leases held by this instance. */
    @Bean
    MeterBinder gcsLockHeldGauge(ObjectProvider<LockRegistry> registry) {
        return new GcsLockHeldGauge(registry::getIfAvailable);
    }
}
