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
import io.github.gcslock.spring.GcsLockedWaits;
import io.github.gcslock.spring.GcsReachability;
import io.github.gcslock.spring.SpringEventLockListener;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.BeanPostProcessor;
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
import org.springframework.util.function.SingletonSupplier;

import java.time.Duration;
import java.util.function.Supplier;

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

    /** Order of the {@code @GcsLocked} advisor: outside {@code @Transactional} (lowest precedence by default). */
    public static final int ADVISOR_ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

    /**
     * The registry: the {@code gcslock.*} properties ({@link BuilderSettings}), the application name, every
     * {@link LockEventListener} bean, then every {@link GcsLockRegistryBuilderCustomizer} bean in order.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockRegistry.class)
    GcsLockRegistry gcsLockRegistry(ObjectProvider<Storage> storage, GcsLockProperties p, Environment environment,
                                    ObjectProvider<LockEventListener> listeners,
                                    ObjectProvider<GcsLockRegistryBuilderCustomizer> customizers) {
        Storage s = storage.getIfAvailable();
        if (s == null) {
            throw new GcsLockConfigurationException("storage", "no com.google.cloud.storage.Storage bean: add "
                    + "spring-cloud-gcp-starter-storage (GCP credentials), or set gcslock.emulator.endpoint");
        }
        String bucket = BuilderSettings.bucketOf(p);
        if (bucket == null || bucket.isBlank()) {
            throw new GcsLockConfigurationException("bucket", "gcslock.bucket is not set: name the GCS bucket that holds the lock objects");
        }
        BuilderSettings.checkTtl(p.ttl());
        BuilderSettings.checkDefaultWait(p.defaultWait());
        GcsLockRegistry.Builder builder = GcsLockRegistry.builder(s, bucket);
        BuilderSettings.applyTo(builder, p);
        PropertyMapper.get().from(environment.getProperty("spring.application.name")).to(builder::applicationName);
        // GcsReachability is added to every GcsLockRegistry bean, this one included, by gcsReachabilityRegistrar.
        listeners.orderedStream().filter(l -> !(l instanceof GcsReachability)).forEach(builder::listener);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        return builder.build();
    }

    /**
     * Stops start-up on a key under {@code gcslock.} that no property has ({@code gcslock.tll}), naming the
     * nearest valid key, before any bean is created ({@link UnknownPropertyCheck}).
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static BeanFactoryPostProcessor gcsLockUnknownPropertyCheck(Environment environment) {
        return new UnknownPropertyCheck(environment);
    }

    /**
     * Makes the {@code gcsLock} health hear the requests of every {@link GcsLockRegistry} bean — the application's
     * own too, not only the auto-configured one — by adding {@link GcsReachability} as a listener.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static BeanPostProcessor gcsReachabilityRegistrar(ObjectProvider<GcsReachability> reachability) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (bean instanceof GcsLockRegistry registry) {
                    GcsReachability r = reachability.getIfAvailable();
                    if (r != null) {
                        registry.addListener(r);
                    }
                }
                return bean;
            }
        };
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

    /** Ends the waits of {@code @GcsLocked} calls when the context closes, so shutdown is not held up by them. */
    @Bean
    @ConditionalOnMissingBean
    GcsLockedWaits gcsLockedWaits() {
        return new GcsLockedWaits();
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
                                                                 ObjectProvider<GcsLockedAcquireListener> acquireListeners,
                                                                 ObjectProvider<GcsLockProperties> properties,
                                                                 ObjectProvider<GcsLockedWaits> waits) {
        // gcslock.wait as GcsLockProperties bound it, read at the first call that needs it: a post-processor
        // that took the properties bean itself would create it before the other post-processors exist.
        // Checked here too for an application's own LockRegistry bean, where gcsLockRegistry() does not run.
        Supplier<Duration> defaultWait = SingletonSupplier.of(() -> {
            Duration wait = properties.getObject().defaultWait();
            BuilderSettings.checkDefaultWait(wait);
            return wait;
        });
        GcsLockedInterceptor interceptor = new GcsLockedInterceptor(registry, environment, beanFactory,
                event -> events.getObject().publishEvent(event), defaultWait, acquireListeners);
        interceptor.setReachability(reachability);
        interceptor.setWaits(waits);
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
                new AnnotationMatchingPointcut(null, GcsLocked.class, true), interceptor);
        advisor.setOrder(ADVISOR_ORDER);
        GcsLockedBeanPostProcessor postProcessor = new GcsLockedBeanPostProcessor(advisor);
        postProcessor.setProxyTargetClass(environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true));
        return postProcessor;
    }
}
