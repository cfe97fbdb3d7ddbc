package io.github.gcslock.autoconfigure;

import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.GcsLockedAcquireListener;
import io.github.gcslock.spring.GcsLockedBeanPostProcessor;
import io.github.gcslock.spring.GcsLockedInterceptor;
import io.github.gcslock.spring.GcsLockedNameChecker;
import io.github.gcslock.spring.GcsReachability;
import io.github.gcslock.spring.SpringEventLockListener;
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
import org.springframework.boot.context.properties.PropertyMapper;
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
        checkTtl(p.ttl());
        GcsLockRegistry.Builder b = GcsLockRegistry.builder(s, bucket)
                .backoff(p.backoff().initial(), p.backoff().max(), p.backoff().multiplier())
                .verifyBucket(p.verifyBucket())
                .maxRefreshFailures(p.maxRefreshFailures());
        PropertyMapper map = PropertyMapper.get();
        map.from(p::prefix).to(b::prefix);
        map.from(p::ttl).to(b::ttl);
        map.from(p::refreshInterval).to(b::refreshInterval); // unset: follows the TTL (TTL/8)
        map.from(p::safetyMargin).to(b::safetyMargin);
        map.from(p::operationTimeout).to(b::operationTimeout);
        map.from(p::writeRateWindow).to(b::writeRateWindow);
        map.from(p::identity).whenHasText().to(b::identity);
        map.from(environment.getProperty("spring.application.name")).to(b::applicationName);
        listeners.orderedStream().forEach(b::listener);
        return b.build();
    }

    /**
     * A TTL under one second is almost always a unit forgotten: {@code gcslock.ttl=10} binds as 10 ms. No
     * lease could refresh in time (each refresh is one GCS write, and GCS allows about one per second per
     * object), so it gets its own message rather than a refresh-interval error that hides the cause.
     */
    static void checkTtl(java.time.Duration ttl) {
        if (ttl != null && !ttl.isNegative() && !ttl.isZero() && ttl.compareTo(java.time.Duration.ofSeconds(1)) < 0) {
            throw new GcsLockConfigurationException("ttl", "gcslock.ttl is " + PropertyMessages.format(ttl)
                    + ", under one second (a number without a unit is read as milliseconds: gcslock.ttl=10 means 10ms); "
                    + "a lock must live for several refreshes, so use at least 1s, e.g. gcslock.ttl=5m");
        }
    }

    /** Checks {@code @GcsLocked} lock names when their beans are created, so a bad name fails start-up. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static GcsLockedNameChecker gcsLockedNameChecker(Environment environment) {
        return new GcsLockedNameChecker(environment);
    }

    /** Whether GCS answered this instance's last call, for the health and the "reachable again" log line. */
    @Bean
    @ConditionalOnMissingBean
    GcsReachability gcsReachability() {
        return new GcsReachability();
    }

    @Bean
    SpringEventLockListener gcsLockSpringEventListener(ApplicationEventPublisher publisher) {
        return new SpringEventLockListener(publisher);
    }

    /**
     * Applies {@link GcsLocked} with a post-processor of its own, not an advisor bean that only an
     * auto-proxy creator would pick up: with {@code spring.aop.auto=false} and none of
     * {@code @EnableTransactionManagement}/{@code @EnableCaching}, there is no such creator and the
     * annotation would silently do nothing. Proxies class-based unless {@code spring.aop.proxy-target-class=false}.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static GcsLockedBeanPostProcessor gcsLockedBeanPostProcessor(ObjectProvider<LockRegistry> registry, Environment environment,
                                                                 BeanFactory beanFactory, ObjectProvider<ApplicationEventPublisher> events,
                                                                 ObjectProvider<GcsReachability> reachability,
                                                                 ObjectProvider<GcsLockedAcquireListener> acquireListeners) {
        java.time.Duration defaultWait = org.springframework.boot.context.properties.bind.Binder.get(environment)
                .bind("gcslock.wait", java.time.Duration.class).orElse(java.time.Duration.ZERO);
        GcsLockedInterceptor interceptor = new GcsLockedInterceptor(registry, environment, beanFactory,
                event -> events.getObject().publishEvent(event), defaultWait, acquireListeners);
        interceptor.setReachability(reachability);
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
                new AnnotationMatchingPointcut(null, GcsLocked.class, true), interceptor);
        advisor.setOrder(ADVISOR_ORDER);
        GcsLockedBeanPostProcessor postProcessor = new GcsLockedBeanPostProcessor(advisor);
        postProcessor.setProxyTargetClass(environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true));
        return postProcessor;
    }
}
