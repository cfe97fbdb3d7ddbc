package io.github.gcslock.autoconfigure;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.Environment;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns Google's credentials errors (deep inside spring-cloud-gcp's {@code Storage} bean, about 120 lines of
 * stack trace) into a start-up report: what is missing, the ways to provide credentials, and how to develop
 * against an emulator instead. Two errors: no Application Default Credentials at all, and a
 * {@code GOOGLE_APPLICATION_CREDENTIALS} that names a file which cannot be read. When {@code gcslock.bucket} is
 * not set either, the report says so too, so that the user does not fix one to meet the other. Names no
 * credential values (a key file's path is not one).
 */
public class GcsLockCredentialsFailureAnalyzer implements FailureAnalyzer {

    /** The start of the message of google-auth-library's {@code DefaultCredentialsProvider}. */
    static final String NO_DEFAULT_CREDENTIALS = "Your default credentials were not found";

    /**
     * google-auth-library's message when the file that {@code GOOGLE_APPLICATION_CREDENTIALS} names cannot be
     * read: {@code Error reading credential file from environment variable GOOGLE_APPLICATION_CREDENTIALS,
     * value '/path/key.json': File does not exist.}
     */
    static final Pattern UNREADABLE_KEY_FILE = Pattern.compile(
            "Error reading credential file from environment variable GOOGLE_APPLICATION_CREDENTIALS, value '(.*)': (.*)",
            Pattern.DOTALL);

    private final Environment environment;

    /** @param environment the application's, to tell whether {@code gcslock.bucket} is set */
    public GcsLockCredentialsFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message == null) {
                continue;
            }
            Matcher keyFile = UNREADABLE_KEY_FILE.matcher(message);
            if (keyFile.find()) {
                return new FailureAnalysis("gcslock could not start: GOOGLE_APPLICATION_CREDENTIALS names the file '"
                        + keyFile.group(1) + "', which cannot be read (" + keyFile.group(2).lines().findFirst().orElse("").trim()
                        + "), so the GCS client cannot be created." + bucketToo(),
                        "Point GOOGLE_APPLICATION_CREDENTIALS at the service-account key file that exists (an absolute path), "
                                + "or unset it to use gcloud's application-default login or the metadata server.\n" + ways(),
                        failure);
            }
            if (message.contains(NO_DEFAULT_CREDENTIALS)) {
                return new FailureAnalysis(description() + bucketToo(), ways(), failure);
            }
        }
        return null;
    }

    /** The second thing to fix, when there is one: no bucket is set and no emulator gives one. */
    private String bucketToo() {
        if (environment == null || hasText("gcslock.bucket") || hasText("gcslock.emulator.endpoint")
                || environment.getProperty("gcslock.emulator.embedded", Boolean.class, false)) {
            return "";
        }
        return "\n\ngcslock.bucket is not set either: once credentials work, gcslock needs the name of an existing GCS "
                + "bucket for its lock objects (e.g. gcslock.bucket=my-app-locks), or an emulator "
                + "(gcslock.emulator.embedded=true or gcslock.emulator.endpoint=http://127.0.0.1:4443) for development.";
    }

    private boolean hasText(String property) {
        String value = environment.getProperty(property);
        return value != null && !value.isBlank();
    }

    private static String description() {
        return "gcslock could not start: no Google Cloud credentials were found, so the GCS client cannot be created. "
                + "Application Default Credentials were looked for in GOOGLE_APPLICATION_CREDENTIALS ("
                + (System.getenv("GOOGLE_APPLICATION_CREDENTIALS") == null ? "not set" : "set, but not usable")
                + "), in gcloud's application-default login, and on the metadata server of GCE, GKE or Cloud Run "
                + "(not reachable from here).";
    }

    private static String ways() {
        return """
                Give the application credentials, one of:
                    - on a developer machine: run `gcloud auth application-default login`
                    - with a service-account key file: set GOOGLE_APPLICATION_CREDENTIALS=/path/to/key.json \
                (or spring.cloud.gcp.credentials.location=file:/path/to/key.json)
                    - on GKE, Cloud Run or GCE: run as a service account (workload identity on GKE); \
                the metadata server then provides the credentials
                Or develop without a GCP account, on an emulator:
                    - gcslock.emulator.embedded=true, with io.github.gcslock:gcslock-test on the class path \
                (locks are then local to this process)
                    - gcslock.emulator.endpoint=http://127.0.0.1:4443, a standalone emulator that several \
                processes share""";
    }
}
