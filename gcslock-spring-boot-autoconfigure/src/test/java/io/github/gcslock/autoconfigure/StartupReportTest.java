package io.github.gcslock.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.mock.env.MockEnvironment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/** What a user sees when their own app cannot start: Boot's failure report, written by gcslock's analyzers. */
@ExtendWith(OutputCaptureExtension.class)
class StartupReportTest {

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class UsersApp {
    }

    private static void start(String... args) {
        SpringApplication app = new SpringApplication(UsersApp.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        app.run(args);
    }

    @Test
    void noCredentialsEndsInAShortReportInsteadOfAStackTrace(CapturedOutput output) {
        assumeThat(System.getenv("GOOGLE_APPLICATION_CREDENTIALS")).as("no ADC on this machine").isNull();
        assumeThat(Files.exists(Path.of(System.getProperty("user.home"), ".config/gcloud/application_default_credentials.json")))
                .as("no gcloud ADC on this machine").isFalse();
        assertThatThrownBy(() -> start("--gcslock.bucket=my-app-locks", "--spring.cloud.gcp.project-id=my-project"))
                .isNotNull();
        String out = output.getAll();
        assertThat(out).contains("APPLICATION FAILED TO START")
                .contains("gcslock could not start: no Google Cloud credentials were found")
                .contains("gcloud auth application-default login")
                .contains("GOOGLE_APPLICATION_CREDENTIALS=/path/to/key.json")
                .contains("workload identity")
                .contains("gcslock.emulator.embedded=true");
        assertThat(out.lines().filter(l -> l.trim().startsWith("at ")).count()).as("no stack trace").isZero();
    }

    @Test
    void noCredentialsAndNoBucketReportsBoth(CapturedOutput output) {
        assumeThat(System.getenv("GOOGLE_APPLICATION_CREDENTIALS")).as("no ADC on this machine").isNull();
        assumeThat(Files.exists(Path.of(System.getProperty("user.home"), ".config/gcloud/application_default_credentials.json")))
                .as("no gcloud ADC on this machine").isFalse();
        assertThatThrownBy(() -> start("--spring.cloud.gcp.project-id=my-project")).isNotNull();
        String out = output.getAll();
        assertThat(out).contains("gcslock could not start: no Google Cloud credentials were found")
                .contains("gcslock.bucket is not set either: once credentials work, gcslock needs the name of an existing "
                        + "GCS bucket for its lock objects (e.g. gcslock.bucket=my-app-locks), or an emulator");
        assertThat(out.lines().filter(l -> l.trim().startsWith("at ")).count()).as("no stack trace").isZero();
    }

    /** The user's app in a JVM of its own, for what only a process environment can set. */
    public static final class UsersAppMain {
        public static void main(String[] args) {
            start(args);
        }
    }

    @Test
    void aCredentialsVariableNamingAMissingFileGetsTheCredentialsReport(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("no-such-key.json");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), UsersAppMain.class.getName(),
                "--spring.cloud.gcp.project-id=my-project", "--gcslock.bucket=my-app-locks")
                .redirectErrorStream(true);
        pb.environment().put("GOOGLE_APPLICATION_CREDENTIALS", missing.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        System.out.println("MISSING KEY FILE REPORT:\n" + out.substring(Math.max(0, out.indexOf("APPLICATION FAILED TO START") - 30)));
        assertThat(p.exitValue()).isNotZero();
        assertThat(out).contains("APPLICATION FAILED TO START")
                .contains("gcslock could not start: GOOGLE_APPLICATION_CREDENTIALS names the file '" + missing
                        + "', which cannot be read (File does not exist.), so the GCS client cannot be created.")
                .contains("Point GOOGLE_APPLICATION_CREDENTIALS at the service-account key file that exists")
                .doesNotContain("gcslock.bucket is not set either");
        assertThat(out.lines().filter(l -> l.trim().startsWith("at ")).count()).as("no stack trace").isZero();
    }

    /** The console from Boot's failure banner on, checked to hold no stack trace. */
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
    void aCredentialsLocationNamingAMissingFileGetsTheCredentialsReport(@TempDir Path dir, CapturedOutput output) {
        Path missing = dir.resolve("no-such-key.json");
        assertThatThrownBy(() -> start("--gcslock.bucket=my-app-locks", "--spring.cloud.gcp.project-id=my-project",
                "--spring.cloud.gcp.credentials.location=file:" + missing)).isNotNull();
        assertThat(report(output))
                .contains("gcslock could not start: spring.cloud.gcp.credentials.location names 'file:" + missing
                        + "', a file that does not exist, so the GCS client cannot be created.")
                .contains("Point spring.cloud.gcp.credentials.location at the service-account key file that exists, e.g. "
                        + "spring.cloud.gcp.credentials.location=file:/path/to/key.json (an absolute path after file:, or "
                        + "classpath:key.json), or remove it to use Application Default Credentials.")
                .contains("gcloud auth application-default login")
                .doesNotContain("gcslock.bucket is not set either");
    }

    @Test
    void aCredentialsLocationNamingAFileThatIsNoKeyGetsAnActionAboutTheKey(@TempDir Path dir, CapturedOutput output) throws Exception {
        Path notAKey = Files.writeString(dir.resolve("key.json"), "{\"hello\": \"world\"}");
        assertThatThrownBy(() -> start("--spring.cloud.gcp.project-id=my-project",
                "--spring.cloud.gcp.credentials.location=file:" + notAKey)).isNotNull();
        assertThat(report(output))
                .contains("gcslock could not start: spring.cloud.gcp.credentials.location names 'file:" + notAKey
                        + "', which is not a usable credentials file (Error reading credentials from stream, 'type' field not "
                        + "specified.), so the GCS client cannot be created.")
                .contains("The file exists but is not a Google credentials JSON file")
                .contains("and point spring.cloud.gcp.credentials.location at it (spring.cloud.gcp.credentials.location="
                        + "file:/path/to/key.json), or remove spring.cloud.gcp.credentials.location")
                .doesNotContain("does not exist")
                .contains("gcslock.bucket is not set either");
    }

    @Test
    void aCredentialsVariableNamingAFileThatIsNoKeyGetsAnActionAboutTheKey() {
        Exception malformed = new RuntimeException("Error creating bean with name 'storage'", new IOException(
                "Error reading credential file from environment variable GOOGLE_APPLICATION_CREDENTIALS, value "
                        + "'/keys/key.json': Error reading credentials from stream, 'type' field not specified."));
        FailureAnalysis a = new GcsLockCredentialsFailureAnalyzer(new MockEnvironment().withProperty("gcslock.bucket", "b"))
                .analyze(malformed);
        assertThat(a.getDescription()).isEqualTo("gcslock could not start: GOOGLE_APPLICATION_CREDENTIALS names the file "
                + "'/keys/key.json', which is not a usable credentials file (Error reading credentials from stream, 'type' "
                + "field not specified.), so the GCS client cannot be created.");
        assertThat(a.getAction()).startsWith("The file exists but is not a Google credentials JSON file")
                .contains("point GOOGLE_APPLICATION_CREDENTIALS at it (GOOGLE_APPLICATION_CREDENTIALS=/path/to/key.json), "
                        + "or unset GOOGLE_APPLICATION_CREDENTIALS");
    }

    @Test
    void onSpringBoot3TheAppStopsWithOneParagraphSayingGcslockNeedsBoot4(CapturedOutput output) {
        // Spring Boot 3 lacks Boot 4's org.springframework.boot.EnvironmentPostProcessor: hide it, as on Boot 3.
        FilteredClassLoader boot3 = new FilteredClassLoader(SpringBootVersionCheck.BOOT_4_MARKER);
        SpringApplication app = new SpringApplication(new DefaultResourceLoader(boot3), UsersApp.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        assertThatThrownBy(() -> app.run("--gcslock.emulator.embedded=true"))
                .isInstanceOf(SpringBootVersionCheck.UnsupportedSpringBootException.class);
        assertThat(output.getAll()).contains("APPLICATION FAILED TO START")
                .contains("This version of gcslock (the version of gcslock-spring-boot-starter) needs Spring Boot 4 (4.0.x or 4.1.x, "
                        + "on Java 17 to 25), and this application runs Spring Boot " + SpringBootVersion.getVersion() + ".")
                .contains("Upgrade the application to Spring Boot 4.0.x or 4.1.x, or remove gcslock-spring-boot-starter.");
    }

    @Test
    void theBoot4CheckPassesOnBoot4AndFailsWithoutItsMarker() {
        SpringBootVersionCheck.check(getClass().getClassLoader());
        assertThatThrownBy(() -> SpringBootVersionCheck.check(new FilteredClassLoader(SpringBootVersionCheck.BOOT_4_MARKER)))
                .isInstanceOf(SpringBootVersionCheck.UnsupportedSpringBootException.class)
                .hasMessageContaining("gcslock needs Spring Boot 4.0 or 4.1");
        assertThat(new UnsupportedSpringBootFailureAnalyzer().analyze(new SpringBootVersionCheck.UnsupportedSpringBootException("3.5.7"))
                .getDescription()).contains("this application runs Spring Boot 3.5.7.");
    }

    @Test
    void theAnalyzerRecognisesTheCredentialsErrorAnywhereInTheChain() {
        Exception real = new RuntimeException("Error creating bean with name 'storage'",
                new IOException(GcsLockCredentialsFailureAnalyzer.NO_DEFAULT_CREDENTIALS + ". To set up Application Default "
                        + "Credentials for your environment, see https://cloud.google.com/docs/authentication/external/set-up-adc."));
        assertThat(new GcsLockCredentialsFailureAnalyzer(new org.springframework.mock.env.MockEnvironment()).analyze(real).getAction())
                .contains("gcloud auth application-default login");
        assertThat(new GcsLockCredentialsFailureAnalyzer(new org.springframework.mock.env.MockEnvironment()).analyze(new IOException("disk full"))).isNull();
    }
}
