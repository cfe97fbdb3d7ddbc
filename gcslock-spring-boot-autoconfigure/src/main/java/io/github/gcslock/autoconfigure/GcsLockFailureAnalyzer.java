package io.github.gcslock.autoconfigure;

import io.github.gcslock.GcsLockConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns an invalid gcslock setting into a start-up report that names the {@code gcslock.*} property to fix,
 * derived from the setting the engine names ({@link BuilderSettings#propertyOf}); a setting that no property
 * feeds (set in code) is named as the builder setting.
 */
public class GcsLockFailureAnalyzer extends AbstractFailureAnalyzer<GcsLockConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, GcsLockConfigurationException cause) {
        String property = propertyOf(cause.setting());
        String action = switch (cause.setting()) {
            case "storage" -> "Add com.google.cloud:spring-cloud-gcp-starter-storage with GCP credentials, or point "
                    + "gcslock.emulator.endpoint at a GCS emulator.";
            case "bucket" -> "Set gcslock.bucket to the name of an existing GCS bucket (e.g. gcslock.bucket=my-app-locks).";
            case "emulator.embedded" -> emulatorAction(cause.getMessage().contains("for tests only"));
            case "name" -> "Fix the lock name: non-empty, at most 1024 bytes of UTF-8 with gcslock.prefix, without "
                    + "control characters or # [ ] * ?; a name containing # is SpEL over the method's arguments "
                    + "(\"'invoice-' + #tenant\" or \"invoice-#{#tenant}\").";
            case "method" -> "@GcsLocked works through a Spring proxy: put it on a public, non-final instance method of a "
                    + "non-final bean class, called through the bean; a method whose work goes on after it returns must "
                    + "return CompletableFuture, CompletionStage, Mono or Flux, so that the lock is held until that ends.";
            case "duration" -> "Fix the @GcsLocked attribute: maxWait and holdAtLeast take a duration that is not negative "
                    + "(30s, 500ms, PT1M; 0s for no wait), or a ${...} placeholder that resolves to one; leave maxWait "
                    + "empty for the default (gcslock.wait for SKIP and FAIL, no limit for WAIT).";
            case "ttl" -> "Set gcslock.ttl to a duration with its unit, e.g. gcslock.ttl=5m (the default) or gcslock.ttl=30s; "
                    + "a number without a unit is read as milliseconds.";
            case "refreshInterval", "maxRefreshFailures" -> "Lower gcslock.refresh-interval or gcslock.max-refresh-failures, "
                    + "or raise gcslock.ttl. Leaving gcslock.refresh-interval unset makes it follow the TTL "
                    + "(gcslock.ttl / 8, whole seconds: 37s for 5m).";
            case "safetyMargin" -> "Lower gcslock.safety-margin, or leave it unset: it defaults to "
                    + "min(gcslock.ttl / 5, (gcslock.ttl - gcslock.refresh-interval) / 2).";
            default -> property != null
                    ? "Fix " + property + ": durations take a unit (500ms, 30s, 5m); leave it unset for the default."
                    : "Fix the value that code gives the registry builder's " + cause.setting() + " (in a "
                    + "GcsLockRegistryBuilderCustomizer bean or the application's own GcsLockRegistry.builder() call).";
        };
        if (cause.setting().equals("name") || cause.setting().equals("method") || cause.setting().equals("duration")) {
            return new FailureAnalysis("gcslock is misconfigured: " + cause.getMessage(), action, cause);
        }
        return new FailureAnalysis("gcslock is misconfigured: " + PropertyMessages.translate(cause.getMessage())
                + (property != null ? " (property: " + property + ")" : " (builder setting: " + cause.setting() + ")"),
                action, cause);
    }

    /**
     * How to have gcslock-test on the class path of development runs and not in production: optional in Maven
     * (not compile scope, which would ship the emulator in the application), {@code developmentOnly} in Gradle
     * (not {@code testImplementation} alone, which {@code bootRun} does not see).
     */
    private static String emulatorAction(boolean declaredForTestsOnly) {
        return (declaredForTestsOnly
                ? "To use the embedded emulator outside tests, declare gcslock-test as optional instead of test-scoped "
                : "Add io.github.gcslock:gcslock-test as an optional dependency (not compile scope, which would ship the "
                + "emulator in the production application) ")
                + "(Maven's counterpart of Gradle's developmentOnly: on the class path of spring-boot:run and of the tests, "
                + "not passed on to projects that depend on yours, and left out of the repackaged jar by Spring Boot 4's "
                + "Maven plugin unless includeOptional is set):\n"
                + "    <dependency>\n"
                + "        <groupId>io.github.gcslock</groupId>\n"
                + "        <artifactId>gcslock-test</artifactId>\n"
                + "        <version>" + gcslockVersion() + "</version>\n"
                + "        <optional>true</optional>\n"
                + "    </dependency>\n"
                + (declaredForTestsOnly
                ? "(Gradle: developmentOnly \"io.github.gcslock:gcslock-test\" besides testImplementation.)\n"
                + "Or keep it test-scoped and run the application on a standalone emulator with "
                + "gcslock.emulator.endpoint, or on real GCS with gcslock.bucket and GCP credentials."
                : "(Gradle: developmentOnly \"io.github.gcslock:gcslock-test:" + gcslockVersion() + "\" for bootRun, and "
                + "testImplementation for the tests; testImplementation alone is not on bootRun's class path.)\n"
                + "Or run a standalone emulator and set gcslock.emulator.endpoint, or use real GCS: "
                + "gcslock.emulator.embedded=false with gcslock.bucket and GCP credentials.");
    }

    /** The version of gcslock on the class path (from the jar manifest); a hint when run from classes. */
    static String gcslockVersion() {
        String v = GcsLockFailureAnalyzer.class.getPackage().getImplementationVersion();
        return v != null ? v : "the version of gcslock-spring-boot-starter";
    }

    /**
     * The Spring property of a setting: {@code refreshInterval} is {@code gcslock.refresh-interval}; null for
     * a setting no property feeds. {@code storage} (no {@code Storage} bean) points at the emulator switch.
     */
    static String propertyOf(String setting) {
        if (setting.equals("storage")) {
            return "gcslock.emulator.endpoint";
        }
        return BuilderSettings.propertyOf(setting);
    }
}
