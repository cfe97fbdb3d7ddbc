package io.github.gcslock.autoconfigure;

import com.google.cloud.spring.autoconfigure.core.GcpContextAutoConfiguration;
import com.google.cloud.spring.autoconfigure.storage.GcpStorageAutoConfiguration;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.gcslock.spring.actuate.GcsLockHealthIndicator;
import io.github.gcslock.spring.actuate.GcsLocksEndpoint;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;

/** The first day with gcslock: the start-up reports, the metadata's keys and the endpoint's answers a new user meets. */
class FirstContactTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();

    private static FailureAnalysis analyze(Throwable failure) {
        return new GcsLockFailureAnalyzer().analyze(failure);
    }

    @Test
    void theMissingBucketMessageReadsAsEnglish() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcsLockAutoConfiguration.class))
                .withPropertyValues("gcslock.emulator.endpoint=" + gcs.endpoint())
                .run(ctx -> assertThat(analyze(ctx.getStartupFailure()).getDescription()).isEqualTo("gcslock is misconfigured: "
                        + "gcslock.bucket is not set: name the GCS bucket that holds the lock objects (property: gcslock.bucket)"));
        assertThat(PropertyMessages.translate("bucket must be set to the GCS bucket that holds the lock objects"))
                .isEqualTo("gcslock.bucket must be set to the GCS bucket that holds the lock objects");
    }

    @Test
    void aNegativeDefaultWaitIsRefusedAtStartUpNamingTheProperty() {
        gcs.runner().withPropertyValues("gcslock.wait=-1s").run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis a = analyze(ctx.getStartupFailure());
            assertThat(a.getDescription()).isEqualTo("gcslock is misconfigured: gcslock.wait is -1s, a negative wait; use 0s "
                    + "(the default: one attempt, no waiting) or a positive duration such as 30s (property: gcslock.wait)");
            assertThat(a.getAction()).contains("Fix gcslock.wait");
        });
        gcs.runner().withPropertyValues("gcslock.wait=0s").run(ctx -> assertThat(ctx).hasNotFailed());
    }

    /** The health switch as the configuration metadata names it, read from the metadata itself. */
    private static String healthSwitchOfTheMetadata() throws Exception {
        try (var in = FirstContactTest.class.getResourceAsStream("/META-INF/additional-spring-configuration-metadata.json")) {
            JsonObject metadata = JsonParser.parseReader(new InputStreamReader(in, StandardCharsets.UTF_8)).getAsJsonObject();
            return StreamSupport.stream(metadata.getAsJsonArray("properties").spliterator(), false)
                    .map(p -> p.getAsJsonObject().get("name").getAsString())
                    .filter(name -> name.startsWith("management.health.") && name.endsWith(".enabled"))
                    .findFirst().orElseThrow();
        }
    }

    @Test
    void theHealthSwitchTheMetadataOffersTurnsTheIndicatorOff() throws Exception {
        String key = healthSwitchOfTheMetadata();
        assertThat(key).isEqualTo("management.health.gcslock.enabled");
        gcs.runner(GcsLockActuatorAutoConfiguration.class).withPropertyValues(key + "=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(GcsLockHealthIndicator.class));
        gcs.runner(GcsLockActuatorAutoConfiguration.class).withPropertyValues(key + "=true")
                .run(ctx -> assertThat(ctx).hasSingleBean(GcsLockHealthIndicator.class));
        gcs.runner(GcsLockActuatorAutoConfiguration.class)
                .run(ctx -> assertThat(ctx).as("on by default").hasSingleBean(GcsLockHealthIndicator.class));
    }

    @Test
    void theLockListAnswers503WithTheReasonDuringAnOutage() {
        gcs.runner(GcsLockActuatorAutoConfiguration.class)
                .withPropertyValues("management.endpoints.web.exposure.include=gcslocks", "gcslock.operation-timeout=300ms")
                .run(ctx -> {
                    GcsLocksEndpoint endpoint = ctx.getBean(GcsLocksEndpoint.class);
                    assertThat(endpoint.locks().getStatus()).isEqualTo(WebEndpointResponse.STATUS_OK);
                    gcs.faults().failNext(100_000, 503);
                    try {
                        WebEndpointResponse<Object> list = endpoint.locks();
                        WebEndpointResponse<Object> one = endpoint.lock(new String[]{"nightly"});
                        assertThat(one.getStatus()).isEqualTo(503);
                        assertThat(list.getStatus()).isEqualTo(503);
                        assertThat(((Map<?, ?>) list.getBody()).keySet()).map(Object::toString).containsExactly("error");
                        assertThat(((Map<?, ?>) list.getBody()).get("error").toString()).contains("503");
                        System.out.println("LIST during outage: " + list.getBody());
                    } finally {
                        gcs.faults().reset();
                    }
                });
    }

    @Test
    void anEmbeddedEmulatorDeclaredForTestsOnlyIsReportedAsSuch(@TempDir Path project) throws Exception {
        Files.writeString(project.resolve("pom.xml"), """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <dependencies>
                    <dependency>
                      <groupId>io.github.gcslock</groupId>
                      <artifactId>gcslock-test</artifactId>
                      <scope>test</scope>
                    </dependency>
                  </dependencies>
                </project>
                """);
        String workingDirectory = System.getProperty("user.dir");
        System.setProperty("user.dir", project.toString()); // spring-boot:run runs in the project's directory
        try {
            new ApplicationContextRunner()
                    .withClassLoader(new FilteredClassLoader(GcsEmulator.class)) // as on spring-boot:run's class path
                    .withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class, GcpContextAutoConfiguration.class,
                            GcpStorageAutoConfiguration.class, GcsLockAutoConfiguration.class))
                    .withPropertyValues("gcslock.emulator.embedded=true", "spring.cloud.gcp.project-id=p")
                    .run(ctx -> {
                        FailureAnalysis a = analyze(ctx.getStartupFailure());
                        System.out.println("TEST-SCOPED REPORT:\n" + a.getDescription() + "\n" + a.getAction());
                        assertThat(a.getDescription()).isEqualTo("gcslock is misconfigured: gcslock.emulator.embedded=true "
                                + "needs the in-process emulator of io.github.gcslock:gcslock-test, which is not on the class path: "
                                + "pom.xml declares it for tests only, and test dependencies are not on the class path of "
                                + "spring-boot:run, bootRun or the packaged application; gcslock does not fall back to real GCS "
                                + "(property: gcslock.emulator.embedded)");
                        assertThat(a.getAction()).contains("<optional>true</optional>").contains("developmentOnly")
                                .doesNotContain("Add io.github.gcslock:gcslock-test");
                    });
        } finally {
            System.setProperty("user.dir", workingDirectory);
        }
    }

    @Test
    void testOnlyDeclarationsAreFoundInMavenAndGradleBuildFiles(@TempDir Path dir) throws Exception {
        assertThat(TestScopedEmulator.declaredIn(dir)).isEmpty();
        Files.writeString(dir.resolve("pom.xml"), "<project><dependencies><dependency><groupId>io.github.gcslock</groupId>"
                + "<artifactId>gcslock-test</artifactId><optional>true</optional></dependency></dependencies></project>");
        assertThat(TestScopedEmulator.declaredIn(dir)).as("optional is not test-only").isEmpty();
        Files.writeString(dir.resolve("pom.xml"), "<project><dependencyManagement><dependencies><dependency>"
                + "<groupId>io.github.gcslock</groupId><artifactId>gcslock-test</artifactId><scope>test</scope>"
                + "</dependency></dependencies></dependencyManagement></project>");
        assertThat(TestScopedEmulator.declaredIn(dir)).as("managed, not declared").isEmpty();
        Files.writeString(dir.resolve("pom.xml"), "not xml");
        assertThat(TestScopedEmulator.declaredIn(dir)).isEmpty();
        Files.delete(dir.resolve("pom.xml"));
        Files.writeString(dir.resolve("build.gradle.kts"), "dependencies {\n  testImplementation(\"io.github.gcslock:gcslock-test:0.1.0\")\n}");
        assertThat(TestScopedEmulator.declaredIn(dir)).hasValue("build.gradle.kts");
    }
}
