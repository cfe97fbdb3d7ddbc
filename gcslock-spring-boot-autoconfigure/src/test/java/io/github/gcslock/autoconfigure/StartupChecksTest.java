package io.github.gcslock.autoconfigure;

import io.github.gcslock.autoconfigure.UnknownPropertyCheck.UnknownGcsLockPropertyException;
import io.github.gcslock.spring.GcsLocked;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Start-up checks a new user meets: what the report says, word for word, for each mistake. */
@ExtendWith(OutputCaptureExtension.class)
class StartupChecksTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class UsersApp {
    }

    private static void start(String... args) {
        SpringApplication app = new SpringApplication(UsersApp.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        app.run(args);
    }

    /** The part of the console from Boot's failure banner on, as a user reads it. */
    private static String report(CapturedOutput output) {
        String all = output.getAll();
        int at = all.indexOf("APPLICATION FAILED TO START");
        assertThat(at).as("a failure report in:\n" + all).isNotNegative();
        String report = all.substring(at);
        System.out.println("REPORT:\n" + report);
        assertThat(report.lines().filter(l -> l.trim().startsWith("at ")).count()).as("no stack trace").isZero();
        return report;
    }

    @Test
    void aMisspelledKeyOnTheCommandLineStopsStartUpNamingTheNearestValidKey(CapturedOutput output) {
        assertThatThrownBy(() -> start("--gcslock.emulator.embedded=true", "--gcslock.tll=10s"))
                .isInstanceOf(UnknownGcsLockPropertyException.class);
        assertThat(report(output)).contains("""
                Description:

                gcslock is misconfigured: gcslock.tll ("gcslock.tll" from property source "commandLineArgs") is not a \
                gcslock property; did you mean gcslock.ttl?

                Action:

                Rename gcslock.tll to gcslock.ttl. gcslock refuses a key under gcslock. that it does not know rather than \
                run on the default the key meant to change;""");
    }

    @Test
    void misspelledKeysInAPropertiesFileAreEachNamedWithTheirLine(@TempDir Path dir, CapturedOutput output) throws Exception {
        Path file = dir.resolve("application.properties");
        Files.writeString(file, """
                gcslock.emulator.embedded=true
                gcslock.refresh-intervall=2s
                gcslock.buckett=my-app-locks
                gcslock.completely-unrelated=1
                """);
        assertThatThrownBy(() -> start("--spring.config.location=file:" + file))
                .isInstanceOf(UnknownGcsLockPropertyException.class);
        String report = report(output);
        assertThat(report)
                .contains("gcslock is misconfigured: gcslock.buckett (URL [file:" + file + "] - 3:17) is not a gcslock "
                        + "property; did you mean gcslock.bucket?\n")
                .contains("gcslock.completely-unrelated (URL [file:" + file + "] - 4:30) is not a gcslock property\n")
                .contains("gcslock.refresh-intervall (URL [file:" + file + "] - 2:27) is not a gcslock property; "
                        + "did you mean gcslock.refresh-interval?\n")
                .contains("Rename gcslock.buckett to gcslock.bucket, remove gcslock.completely-unrelated, "
                        + "rename gcslock.refresh-intervall to gcslock.refresh-interval.");
    }

    @Test
    void validKeysInEveryFormStartAndSystemPropertiesAndEnvironmentVariablesAreLeftAlone() {
        gcs.runner().withPropertyValues("gcslock.refreshInterval=10s", "gcslock.max_refresh_failures=3",
                        "gcslock.backoff.initial=1s", "gcslock.wait=0s", "gcslock.endpoint.force-release-enabled=false")
                .withSystemProperties("gcslock.pbt.calls=5") // a test tool's flag, as Boot's ignoreUnknownFields=false allows
                .run(ctx -> assertThat(ctx).hasNotFailed());
        gcs.runner().withPropertyValues("gcslock.backoff.maxx=1s")
                .run(ctx -> assertThat(ctx.getStartupFailure()).hasMessage("unknown gcslock properties: [gcslock.backoff.maxx]"));
    }

    @Test
    void aKeyThatAnotherModuleDeclaresInItsMetadataIsLeftAlone(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("META-INF"));
        Files.writeString(dir.resolve("META-INF/spring-configuration-metadata.json"),
                "{\"properties\":[{\"name\":\"gcslock.other-module.mode\",\"type\":\"java.lang.String\"}]}");
        try (URLClassLoader withOtherModule = new URLClassLoader(new URL[]{dir.toUri().toURL()}, getClass().getClassLoader())) {
            gcs.runner().withClassLoader(withOtherModule).withPropertyValues("gcslock.other-module.mode=fast")
                    .run(ctx -> assertThat(ctx).hasNotFailed());
            gcs.runner().withClassLoader(withOtherModule).withPropertyValues("gcslock.other-modul.mode=fast")
                    .run(ctx -> {
                        FailureAnalysis a = new GcsLockUnknownPropertyFailureAnalyzer().analyze(ctx.getStartupFailure());
                        assertThat(a.getDescription()).endsWith("is not a gcslock property; did you mean gcslock.other-module.mode?");
                    });
        }
    }

    @Test
    void theNearestKeyIgnoresDashesAndCountsASwapAsOneEdit() {
        var known = java.util.List.of("gcslock.ttl", "gcslock.bucket", "gcslock.refresh-interval", "gcslock.safety-margin");
        assertThat(UnknownPropertyCheck.nearest("gcslock.tll", known)).isEqualTo("gcslock.ttl");
        assertThat(UnknownPropertyCheck.nearest("gcslock.refreshinterval", known)).isEqualTo("gcslock.refresh-interval");
        assertThat(UnknownPropertyCheck.nearest("gcslock.saftey-margin", known)).isEqualTo("gcslock.safety-margin");
        assertThat(UnknownPropertyCheck.nearest("gcslock.zookeeper", known)).isNull();
    }

    @Test
    void theRefreshIntervalBoundIsPrintedInBootsDurationStyleRoundedDown() {
        gcs.runner().withPropertyValues("gcslock.ttl=5s", "gcslock.refresh-interval=2s").run(ctx -> {
            FailureAnalysis a = new GcsLockFailureAnalyzer().analyze(ctx.getStartupFailure());
            System.out.println("REFRESH BOUND REPORT:\n" + a.getDescription());
            assertThat(a.getDescription()).isEqualTo("gcslock is misconfigured: gcslock.refresh-interval (2s) x "
                    + "gcslock.max-refresh-failures (3) must be below gcslock.ttl (5s): a holder must give up before its lock "
                    + "expires; use gcslock.refresh-interval < 1600ms (property: gcslock.refresh-interval)");
        });
    }

    static class NegativeWait {
        @GcsLocked(value = "nightly", maxWait = "-1s")
        public void run() {
        }
    }

    static class UnreadableWait {
        @GcsLocked(value = "nightly", maxWait = "${jobs.wait:soon}")
        public void run() {
        }
    }

    @Test
    void aNegativeOrUnreadableMaxWaitIsRefusedAtStartUp() {
        gcs.runner().withBean(NegativeWait.class).run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis a = new GcsLockFailureAnalyzer().analyze(ctx.getStartupFailure());
            System.out.println("NEGATIVE MAXWAIT REPORT:\n" + a.getDescription() + "\n" + a.getAction());
            assertThat(a.getDescription()).isEqualTo("gcslock is misconfigured: @GcsLocked on "
                    + "NegativeWait.run(..): maxWait must not be negative, got -1s");
            assertThat(a.getAction()).startsWith("Fix the @GcsLocked attribute: maxWait and holdAtLeast take a duration that is not negative");
        });
        gcs.runner().withBean(UnreadableWait.class).run(ctx -> assertThat(new GcsLockFailureAnalyzer()
                .analyze(ctx.getStartupFailure()).getDescription()).isEqualTo("gcslock is misconfigured: @GcsLocked on "
                + "UnreadableWait.run(..): maxWait '${jobs.wait:soon}' is not a duration (use e.g. 30s, 500ms, PT1M)"));
        gcs.runner().withBean(UnreadableWait.class).withPropertyValues("jobs.wait=5s").run(ctx -> assertThat(ctx).hasNotFailed());
    }

    private static final String TEST_SCOPED = """
            <project xmlns="http://maven.apache.org/POM/4.0.0">
              <dependencies>
                <dependency>
                  <groupId>io.github.gcslock</groupId>
                  <artifactId>gcslock-test</artifactId>
                  <scope>test</scope>
                </dependency>
              </dependencies>
            </project>
            """;

    @Test
    void aTestScopedEmulatorIsFoundInAPomGivenWithDashFAndInTheModulesOfTheBuild(@TempDir Path dir) throws Exception {
        Path other = dir.resolve("other");
        Files.createDirectories(other);
        Files.writeString(other.resolve("other.xml"), TEST_SCOPED); // mvn -f other.xml spring-boot:run
        Files.writeString(other.resolve("notes.xml"), "<notes/>");
        assertThat(TestScopedEmulator.declaredIn(other)).hasValue("other.xml");

        Path root = dir.resolve("root");
        Files.createDirectories(root.resolve("services/app"));
        Files.writeString(root.resolve("pom.xml"), "<project><modules><module>lib</module><module>services</module></modules></project>");
        Files.writeString(root.resolve("services/pom.xml"), "<project><modules><module>app</module></modules></project>");
        Files.writeString(root.resolve("services/app/pom.xml"), TEST_SCOPED); // run from the root of the build, as an IDE may
        assertThat(TestScopedEmulator.declaredIn(root)).hasValue("services/app/pom.xml");

        Path gradle = dir.resolve("gradle");
        Files.createDirectories(gradle.resolve("app"));
        Files.writeString(gradle.resolve("settings.gradle"), "include 'app'");
        Files.writeString(gradle.resolve("app/build.gradle"), "dependencies {\n  testImplementation 'io.github.gcslock:gcslock-test'\n}");
        assertThat(TestScopedEmulator.declaredIn(gradle)).hasValue("app/build.gradle");
    }

    @Test
    void aMisspeltBucketOnTheEmulatorListsItsBucketsAndSaysHowToCreateOne(CapturedOutput output) throws Exception {
        assertThatThrownBy(() -> start("--gcslock.emulator.endpoint=" + gcs.endpoint(), "--gcslock.bucket=lokcs")).isNotNull();
        String report = report(output);
        assertThat(report).contains("gcslock could not start: the bucket 'lokcs' (gcslock.bucket) does not exist on the GCS "
                        + "emulator at " + gcs.endpoint() + ". The emulator at " + gcs.endpoint() + " has the bucket locks. "
                        + "Did you mean gcslock.bucket=locks?")
                .contains("Set gcslock.bucket=locks, or create the bucket 'lokcs' on the emulator: start the standalone "
                        + "emulator with --bucket lokcs (repeatable: --bucket a --bucket b), or create it while the emulator runs:\n"
                        + "    curl -X POST -H 'Content-Type: application/json' -d '{\"name\":\"lokcs\"}' '" + gcs.endpoint()
                        + "/storage/v1/b?project=gcslock-emulator'")
                .doesNotContain("retention").doesNotContain("identity");
        // The request the report gives creates the bucket, and the application then starts.
        java.net.http.HttpResponse<String> created = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(gcs.endpoint() + "/storage/v1/b?project=gcslock-emulator"))
                        .header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"name\":\"lokcs\"}")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
        gcs.runner().withPropertyValues("gcslock.bucket=lokcs").run(ctx -> assertThat(ctx).hasNotFailed());
    }
}
