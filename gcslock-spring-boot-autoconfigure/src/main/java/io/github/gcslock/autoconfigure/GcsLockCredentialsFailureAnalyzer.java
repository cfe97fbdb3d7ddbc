package io.github.gcslock.autoconfigure;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.Environment;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns Google's credentials errors (deep inside spring-cloud-gcp's {@code Storage} bean, about 120 lines of
 * stack trace) into a start-up report: what is missing, the ways to provide credentials, and how to develop
 * against an emulator instead. The errors: no Application Default Credentials at all, and a key file named by
 * {@code GOOGLE_APPLICATION_CREDENTIALS} or {@code spring.cloud.gcp[.storage].credentials.location} that does not
 * exist or is not a credentials file (each with the action that fits: the path, or a new key). When {@code gcslock.bucket} is
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
        FailureAnalysis location = locationAnalysis(failure);
        if (location != null) {
            return location;
        }
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage();
            if (message == null) {
                continue;
            }
            Matcher keyFile = UNREADABLE_KEY_FILE.matcher(message);
            if (keyFile.find()) {
                String why = keyFile.group(2).lines().findFirst().orElse("").trim();
                boolean missing = why.startsWith("File does not exist");
                return new FailureAnalysis("gcslock could not start: GOOGLE_APPLICATION_CREDENTIALS names the file '"
                        + keyFile.group(1) + "', which " + (missing ? "cannot be read" : "is not a usable credentials file")
                        + " (" + why + "), so the GCS client cannot be created." + bucketToo(),
                        (missing ? "Point GOOGLE_APPLICATION_CREDENTIALS at the service-account key file that exists (an absolute path), "
                                + "or unset it to use gcloud's application-default login or the metadata server.\n"
                                : malformedAction("GOOGLE_APPLICATION_CREDENTIALS", "/path/to/key.json")) + ways(),
                        failure);
            }
            if (message.contains(NO_DEFAULT_CREDENTIALS)) {
                return new FailureAnalysis(description() + bucketToo(), ways(), failure);
            }
        }
        return null;
    }

    /** The properties of spring-cloud-gcp that name a key file: the Storage-specific one wins over the core one. */
    static final String[] LOCATION_PROPERTIES = {"spring.cloud.gcp.storage.credentials.location", "spring.cloud.gcp.credentials.location"};

    /**
     * A key file named by {@code spring.cloud.gcp[.storage].credentials.location} that spring-cloud-gcp could not
     * read (missing) or parse (not a credentials file): its {@code DefaultCredentialsProvider} throws while the
     * {@code Storage} bean is created, and Boot would print the whole chain.
     */
    private FailureAnalysis locationAnalysis(Throwable failure) {
        String property = null;
        String location = null;
        for (String candidate : LOCATION_PROPERTIES) {
            if (environment != null && hasText(candidate)) {
                property = candidate;
                location = environment.getProperty(candidate);
                break;
            }
        }
        if (property == null) {
            return null;
        }
        Throwable cause = null;
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (fromCredentialsProvider(t)) {
                cause = t; // the innermost one: the reading or parsing error itself
            }
        }
        if (cause == null) {
            return null;
        }
        boolean missing = cause instanceof java.io.FileNotFoundException || cause instanceof java.nio.file.NoSuchFileException;
        String why = cause.getMessage() == null ? cause.getClass().getSimpleName()
                : cause.getMessage().lines().findFirst().orElse("").trim();
        if (missing) {
            return new FailureAnalysis("gcslock could not start: " + property + " names '" + location + "', a file that "
                    + "does not exist, so the GCS client cannot be created." + bucketToo(),
                    "Point " + property + " at the service-account key file that exists, e.g. "
                            + property + "=file:/path/to/key.json (an absolute path after file:, or classpath:key.json), "
                            + "or remove it to use Application Default Credentials.\n" + ways(),
                    failure);
        }
        return new FailureAnalysis("gcslock could not start: " + property + " names '" + location + "', which is not a "
                + "usable credentials file (" + why + "), so the GCS client cannot be created." + bucketToo(),
                malformedAction(property, "file:/path/to/key.json") + ways(), failure);
    }

    /** Whether {@code t} was thrown while spring-cloud-gcp's credentials provider read its key file. */
    private static boolean fromCredentialsProvider(Throwable t) {
        for (StackTraceElement frame : t.getStackTrace()) {
            if (frame.getClassName().equals("com.google.cloud.spring.core.DefaultCredentialsProvider")) {
                return true;
            }
        }
        return false;
    }

    /** What to do about a key file that exists but is no credentials file. */
    private static String malformedAction(String setting, String example) {
        return "The file exists but is not a Google credentials JSON file (a service-account key has \"type\": "
                + "\"service_account\"). Create a new JSON key for the service account (Cloud console: IAM > Service "
                + "accounts > Keys > Add key > JSON, or `gcloud iam service-accounts keys create key.json "
                + "--iam-account=NAME@PROJECT.iam.gserviceaccount.com`) and point " + setting + " at it ("
                + setting + "=" + example + "), or " + (setting.contains(".") ? "remove" : "unset") + " " + setting
                + " to use Application Default Credentials.\n";
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
