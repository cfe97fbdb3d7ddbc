package io.github.gcslock.autoconfigure;

import io.github.gcslock.spring.GcsLockAcquireContext;
import io.github.gcslock.spring.GcsLockHoldContext;
import io.github.gcslock.spring.GcsLockObservationListener;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer Observations of acquisitions and holds ({@code gcslock.acquisition}, {@code gcslock.hold}) on
 * the application's {@link ObservationRegistry}, when there is one. The listener is a
 * {@code LockEventListener} bean, which the registry picks up; custom
 * {@code ObservationConvention<GcsLockAcquireContext>} / {@code <GcsLockHoldContext>} beans replace the
 * default names and key values.
 */
@AutoConfiguration(before = GcsLockAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnProperty(prefix = "gcslock", name = "enabled", havingValue = "true", matchIfMissing = true)
public class GcsLockObservationAutoConfiguration {

    @Bean
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnMissingBean
    GcsLockObservationListener gcsLockObservationListener(ObservationRegistry observationRegistry,
                                                          ObjectProvider<ObservationConvention<GcsLockAcquireContext>> acquireConvention,
                                                          ObjectProvider<ObservationConvention<GcsLockHoldContext>> holdConvention) {
        return new GcsLockObservationListener(observationRegistry, acquireConvention.getIfUnique(), holdConvention.getIfUnique());
    }
}
