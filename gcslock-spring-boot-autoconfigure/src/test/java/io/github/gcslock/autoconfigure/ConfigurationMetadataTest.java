package io.github.gcslock.autoconfigure;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The IDE metadata the configuration processor generates (with the additional metadata merged in). */
class ConfigurationMetadataTest {

    private static String metadata() throws Exception {
        return new ClassPathResource("META-INF/spring-configuration-metadata.json").getContentAsString(StandardCharsets.UTF_8);
    }

    @Test
    void everyGcslockPropertyIsDescribed() throws Exception {
        List<String> names = JsonPath.read(metadata(), "$.properties[*].name");
        assertThat(names).contains("gcslock.wait", "gcslock.ttl", "gcslock.backoff.max", "gcslock.endpoint.force-release-enabled");
        List<Map<String, Object>> properties = JsonPath.read(metadata(), "$.properties");
        assertThat(properties).filteredOn(p -> p.get("name").toString().startsWith("gcslock."))
                .hasSizeGreaterThanOrEqualTo(19)
                .allSatisfy(p -> assertThat((String) p.get("description")).as(p.get("name").toString()).isNotBlank());
    }

    @Test
    void theHealthIndicatorSwitchIsDocumented() throws Exception {
        List<String> names = JsonPath.read(metadata(), "$.properties[*].name");
        assertThat(names).contains("management.health.gcslock.enabled");
    }
}
