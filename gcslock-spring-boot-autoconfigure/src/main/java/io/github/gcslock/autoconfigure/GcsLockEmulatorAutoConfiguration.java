package io.github.gcslock.autoconfigure;

import com.google.api.gax.core.CredentialsProvider;
import com.google.cloud.NoCredentials;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.test.GcsEmulator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@link Storage} bound to a GCS emulator, with no credentials, when {@code gcslock.emulator.endpoint}
 * is set or {@code gcslock.emulator.embedded=true}. Runs before spring-cloud-gcp's auto-configuration,
 * whose {@code Storage} and credentials beans then back off: its own {@code storage.host} setting drops
 * the port and its {@code NoCredentialsProvider} makes it fail, so it cannot reach a local emulator.
 */
@AutoConfiguration(beforeName = {
        "com.google.cloud.spring.autoconfigure.core.GcpContextAutoConfiguration",
        "com.google.cloud.spring.autoconfigure.storage.GcpStorageAutoConfiguration"})
@ConditionalOnClass(Storage.class)
@ConditionalOnProperty(prefix = "gcslock", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(GcsLockProperties.class)
public class GcsLockEmulatorAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(GcsLockEmulatorAutoConfiguration.class);

    /** No credentials for an emulator; makes spring-cloud-gcp's credentials bean back off. */
    @Bean
    @ConditionalOnMissingBean(CredentialsProvider.class)
    @ConditionalOnClass(CredentialsProvider.class)
    @ConditionalOnEmulator
    CredentialsProvider gcsLockEmulatorCredentials() {
        return NoCredentials::getInstance;
    }

    /** A running emulator at {@code gcslock.emulator.endpoint}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "gcslock.emulator", name = "endpoint")
    static class ExternalEmulator {

        @Bean
        @ConditionalOnMissingBean(Storage.class)
        Storage gcsLockEmulatorStorage(GcsLockProperties properties) {
            String endpoint = properties.emulator().endpoint();
            log.warn("gcslock: using the GCS emulator at {}, not real GCS", endpoint);
            return StorageOptions.http().setHost(endpoint).setProjectId(properties.emulator().projectId())
                    .setCredentials(NoCredentials.getInstance()).build().getService();
        }
    }

    /**
     * {@code gcslock.emulator.embedded=true} without gcslock-test on the class path: stop before any bean
     * exists. Carrying on would leave spring-cloud-gcp's client talking to real GCS (without credentials,
     * since the emulator switch also turns them off), so every lock call would fail far from the cause.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("io.github.gcslock.test.GcsEmulator")
    @ConditionalOnProperty(prefix = "gcslock.emulator", name = "embedded", havingValue = "true")
    static class EmbeddedEmulatorMissing {

        @Bean
        static BeanFactoryPostProcessor gcsLockEmbeddedEmulatorMissing() {
            return beanFactory -> {
                String why = TestScopedEmulator.inWorkingDirectory()
                        .map(file -> ": " + file + " declares it for tests only, and test dependencies are not on the class "
                                + "path of spring-boot:run, bootRun or the packaged application")
                        .orElse("");
                throw new GcsLockConfigurationException("emulator.embedded", "gcslock.emulator.embedded=true needs "
                        + "the in-process emulator of io.github.gcslock:gcslock-test, which is not on the class path" + why
                        + "; gcslock does not fall back to real GCS");
            };
        }
    }

    /** The in-process emulator of gcslock-test, for development: locks are local to this process. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GcsEmulator.class)
    @ConditionalOnProperty(prefix = "gcslock.emulator", name = "embedded", havingValue = "true")
    static class EmbeddedEmulator {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(GcsEmulator.class)
        GcsEmulator gcsLockEmbeddedEmulator(GcsLockProperties properties) {
            GcsEmulator emulator = GcsEmulator.start();
            emulator.createBucket(BuilderSettings.bucketOf(properties));
            log.warn("gcslock: using the embedded GCS emulator at {} — locks are local to this process; set "
                    + "gcslock.bucket and GCP credentials (and gcslock.emulator.embedded=false) for real GCS", emulator.endpoint());
            return emulator;
        }

        @Bean
        @ConditionalOnMissingBean(Storage.class)
        Storage gcsLockEmbeddedStorage(GcsEmulator emulator, GcsLockProperties properties) {
            return emulator.options().setProjectId(properties.emulator().projectId()).build().getService();
        }
    }
}
