package io.github.gcslock.autoconfigure;

import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.GcsLockedDisabledWarning;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;

/**
 * With {@code gcslock.enabled=false} no {@link GcsLocked} support exists, so annotated methods run
 * unlocked; this warns about each of them at start-up instead of letting that pass silently.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "gcslock", name = "enabled", havingValue = "false")
public class GcsLockDisabledAutoConfiguration {

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static GcsLockedDisabledWarning gcsLockedDisabledWarning() {
        return new GcsLockedDisabledWarning();
    }
}
