package io.github.gcslock.autoconfigure;

import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one list of settings: every builder setting in it is a real, documented property, and the property
 * names are derived from {@link GcsLockProperties} as Boot binds it.
 */
class BuilderSettingsTest {

    @Test
    void propertyNamesFollowBootsBinding() {
        assertThat(BuilderSettings.PREFIX).isEqualTo("gcslock");
        assertThat(BuilderSettings.propertyOf("refreshInterval")).isEqualTo("gcslock.refresh-interval");
        assertThat(BuilderSettings.propertyOf("backoff.multiplier")).isEqualTo("gcslock.backoff.multiplier");
        assertThat(BuilderSettings.propertyOf("emulator.embedded")).isEqualTo("gcslock.emulator.embedded");
        assertThat(BuilderSettings.propertyOf("defaultWait")).as("@Name on the record component").isEqualTo("gcslock.wait");
        assertThat(BuilderSettings.propertyOf("refresherThreads")).as("no property: set in code only").isNull();
        assertThat(BuilderSettings.propertyOf("name")).isNull();
        assertThat(BuilderSettings.propertyOf("backoff.jitter")).isNull();
        assertThat(BuilderSettings.propertyOf("ttl.seconds")).as("a Duration has no sub-properties").isNull();
    }

    @Test
    void everyMappedSettingIsAPropertyInTheConfigurationMetadata() throws Exception {
        String metadata = new ClassPathResource("META-INF/spring-configuration-metadata.json").getContentAsString(StandardCharsets.UTF_8);
        assertThat(BuilderSettings.names()).contains("bucket", "ttl", "refreshInterval", "backoff.max").allSatisfy(setting -> {
            String property = BuilderSettings.propertyOf(setting);
            assertThat(property).as(setting).isNotNull();
            assertThat(metadata).as(property).contains("\"name\": \"" + property + "\"");
        });
    }
}
