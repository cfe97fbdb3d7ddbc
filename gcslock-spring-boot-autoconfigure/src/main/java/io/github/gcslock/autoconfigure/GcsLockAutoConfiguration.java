package io.github.gcslock.autoconfigure;

import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.GcsLockedInterceptor;
import io.github.gcslock.spring.SpringEventLockListener;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Creates the {@link LockRegistry} on the application's {@link Storage} bean (the one spring-cloud-gcp
 * creates, with its credentials, project and host; never a second client), the {@link GcsLocked}
 * support, and the bridge to Spring application events. The registry is closed on shutdown, which
 * releases every held lock at once.
 */
@AutoConfiguration(
        after = GcsLockEmulatorAutoConfiguration.class,
        afterName = "com.google.cloud.spring.autoconfigure.storage.GcpStorageAutoConfiguration")
@ConditionalOnClass({GcsLockRegistry.class, Storage.class})
@ConditionalOnProperty(prefix = "gcslock", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(GcsLockProperties.class)
public class GcsLockAutoConfiguration {

    /** Bucket used by the embedded emulator when {@code gcslock.bucket} is not set. */
    static final String EMBEDDED_BUCKET = "gcslock";

    /** Order of the {@code @GcsLocked} advisor: outside {@code @Transactional} (lowest precedence by default). */
    public static final int ADVISOR_ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

    static String bucketOf(GcsLockProperties p) {
        if ((p.bucket() == null || p.bucket().isBlank()) && p.emulator().embedded()) {
            return EMBEDDED_BUCKET;
        }
        return p.bucket();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockRegistry.class)
    GcsLockRegistry gcsLockRegistry(ObjectProvider<Storage> storage, GcsLockProperties p, Environment environment,
                                    ObjectProvider<LockEventListener> listeners) {
        Storage s = storage.getIfAvailable();
        if (s == null) {
            throw new GcsLockConfigurationException("storage", "no com.google.cloud.storage.Storage bean: add "
                    + "spring-cloud-gcp-starter-storage (GCP credentials), or set gcslock.emulator.endpoint");
        }
        String bucket = bucketOf(p);
        if (bucket == null || bucket.isBlank()) {
            throw new GcsLockConfigurationException("bucket", "gcslock.bucket is not set: name the GCS bucket that holds the lock objects");
        }
        GcsLockRegistry.Builder b = GcsLockRegistry.builder(s, bucket)
                .prefix(p.prefix())
                .ttl(p.ttl())
                .refreshInterval(p.refreshInterval())
                .maxRefreshFailures(p.maxRefreshFailures())
                .backoff(p.backoff().initial(), p.backoff().max(), p.backoff().multiplier())
                .applicationName(environment.getProperty("spring.application.name"))
                .verifyBucket(p.verifyBucket())
                .writeRateWindow(p.writeRateWindow());
        if (p.safetyMargin() != null) {
            b.safetyMargin(p.safetyMargin());
        }
        if (p.operationTimeout() != null) {
            b.operationTimeout(p.operationTimeout());
        }
        if (p.identity() != null && !p.identity().isBlank()) {
            b.identity(p.identity());
        }
        listeners.orderedStream().forEach(b::listener);
        return b.build();
    }

    @Bean
    SpringEventLockListener gcsLockSpringEventListener(ApplicationEventPublisher publisher) {
        return new SpringEventLockListener(publisher);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor gcsLockedAdvisor(ObjectProvider<LockRegistry> registry, Environment environment, BeanFactory beanFactory,
                                    ObjectProvider<ApplicationEventPublisher> events) {
        java.time.Duration defaultWait = org.springframework.boot.context.properties.bind.Binder.get(environment)
                .bind("gcslock.wait", java.time.Duration.class).orElse(java.time.Duration.ZERO);
        GcsLockedInterceptor interceptor = new GcsLockedInterceptor(registry, environment, beanFactory,
                event -> events.getObject().publishEvent(event), defaultWait);
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
                new AnnotationMatchingPointcut(null, GcsLocked.class, true), interceptor);
        advisor.setOrder(ADVISOR_ORDER);
        return advisor;
    }
}
