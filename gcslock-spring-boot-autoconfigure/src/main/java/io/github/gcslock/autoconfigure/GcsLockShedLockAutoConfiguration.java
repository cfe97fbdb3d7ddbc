package io.github.gcslock.autoconfigure;

import io.github.gcslock.LockRegistry;
import io.github.gcslock.shedlock.GcsLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * A ShedLock {@code LockProvider} on the GCS lock registry when {@code shedlock-spring} and
 * {@code gcslock-shedlock} are on the class path, so that {@code @SchedulerLock} jobs lock through GCS
 * with no code change. Backs off when the application defines its own {@code LockProvider}.
 */
@AutoConfiguration(after = GcsLockAutoConfiguration.class)
@ConditionalOnClass(name = {"net.javacrumbs.shedlock.core.LockProvider",
        "net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock",
        "io.github.gcslock.shedlock.GcsLockProvider"})
@ConditionalOnBean(LockRegistry.class)
public class GcsLockShedLockAutoConfiguration {

    /** Closed before the registry (it depends on it): stops its lockAtMostFor timer and releases what it holds. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockProvider.class)
    GcsLockProvider gcsShedLockProvider(LockRegistry registry) {
        return new GcsLockProvider(registry);
    }
}
