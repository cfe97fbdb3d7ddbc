package io.github.gcslock.autoconfigure;

import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsReachability;
import io.github.gcslock.spring.actuate.GcsLockHealthIndicator;
import io.github.gcslock.spring.actuate.GcsLocksEndpoint;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code gcsLock} health contributor and the {@code gcslocks} endpoint, when Actuator is present.
 * They serve any {@link LockRegistry} bean, also a user's own one with {@code gcslock.enabled=false};
 * the properties are therefore bound here too, not only by {@link GcsLockAutoConfiguration}.
 */
@AutoConfiguration(after = GcsLockAutoConfiguration.class)
@ConditionalOnBean(LockRegistry.class)
@EnableConfigurationProperties(GcsLockProperties.class)
public class GcsLockActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    // management.health.gcslock.enabled, the key the configuration metadata describes: the health component
    // keeps its bean-derived name gcsLock, but Boot reads a camel-case key only in exactly that spelling.
    @ConditionalOnEnabledHealthIndicator("gcslock")
    static class Health {

        @Bean
        @ConditionalOnMissingBean(name = "gcsLockHealthIndicator")
        GcsLockHealthIndicator gcsLockHealthIndicator(LockRegistry registry,
                                                      ObjectProvider<GcsReachability> reachability) {
            return new GcsLockHealthIndicator(registry, reachability.getIfAvailable());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    @ConditionalOnAvailableEndpoint(GcsLocksEndpoint.class)
    static class LocksEndpoint {

        @Bean
        @ConditionalOnMissingBean
        GcsLocksEndpoint gcsLocksEndpoint(LockRegistry registry, GcsLockProperties properties) {
            return new GcsLocksEndpoint(registry, properties.endpoint().forceReleaseEnabled());
        }
    }
}
