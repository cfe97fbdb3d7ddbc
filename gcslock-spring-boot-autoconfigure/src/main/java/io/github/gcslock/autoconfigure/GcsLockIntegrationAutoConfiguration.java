package io.github.gcslock.autoconfigure;

import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsIntegrationLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Adapts the GCS lock registry to Spring Integration's {@code LockRegistry} when spring-integration-core
 * is present, e.g. for {@code LockRegistryLeaderInitiator} leader election.
 */
@AutoConfiguration(after = GcsLockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.integration.support.locks.LockRegistry")
@ConditionalOnBean(LockRegistry.class)
public class GcsLockIntegrationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(org.springframework.integration.support.locks.LockRegistry.class)
    GcsIntegrationLockRegistry gcsIntegrationLockRegistry(LockRegistry registry) {
        return new GcsIntegrationLockRegistry(registry);
    }
}
