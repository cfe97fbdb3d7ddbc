package io.github.gcslock.autoconfigure;

import io.github.gcslock.GcsLockRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link GcsLockRegistryBuilderCustomizer} beans: applied in order, after the properties, before build. */
class GcsLockRegistryBuilderCustomizerTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();

    @Test
    void everyCustomizerIsAppliedInOrderAfterTheProperties() {
        gcs.runner().withUserConfiguration(TwoCustomizers.class).withPropertyValues("gcslock.ttl=2m", "gcslock.prefix=app/")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(TwoCustomizers.class).applied).containsExactly("first", "second");
                    GcsLockRegistry registry = ctx.getBean(GcsLockRegistry.class);
                    assertThat(registry.ttl()).as("the later customizer wins over the earlier one and the property")
                            .isEqualTo(Duration.ofMinutes(4));
                    assertThat(registry.prefix()).as("a property no customizer touches").isEqualTo("app/");
                });
    }

    @Test
    void aCustomizerSeesThePropertiesAlreadyApplied() {
        // The builder validates at build(): a customizer that only lowers the refresh interval under a TTL set by
        // property is valid only if the property was applied first.
        gcs.runner().withPropertyValues("gcslock.ttl=10s", "gcslock.refresh-interval=20s")
                .withBean(GcsLockRegistryBuilderCustomizer.class, () -> b -> b.refreshInterval(Duration.ofSeconds(2)))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(GcsLockRegistry.class).refreshInterval()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(ctx.getBean(GcsLockRegistry.class).ttl()).isEqualTo(Duration.ofSeconds(10));
                });
    }

    @Test
    void anInvalidValueFromACustomizerIsReportedAsTheBuilderSettingNotAsAProperty() {
        gcs.runner().withBean(GcsLockRegistryBuilderCustomizer.class, () -> b -> b.refresherThreads(0)).run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis a = new GcsLockFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(a.getDescription()).startsWith("gcslock is misconfigured: ").endsWith("(builder setting: refresherThreads)")
                    .doesNotContain("gcslock.refresher-threads");
            assertThat(a.getAction()).contains("GcsLockRegistryBuilderCustomizer");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoCustomizers {
        final List<String> applied = new CopyOnWriteArrayList<>();

        @Bean
        @Order(2)
        GcsLockRegistryBuilderCustomizer second() {
            return b -> {
                applied.add("second");
                b.ttl(Duration.ofMinutes(4));
            };
        }

        @Bean
        @Order(1)
        GcsLockRegistryBuilderCustomizer first() {
            return b -> {
                applied.add("first");
                b.ttl(Duration.ofMinutes(3));
            };
        }
    }
}
