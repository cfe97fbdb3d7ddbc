package io.github.gcslock.autoconfigure;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Turns Google's "default credentials were not found" (deep inside spring-cloud-gcp's {@code Storage}
 * bean, about 120 lines of stack trace) into a start-up report: what is missing, the ways to provide
 * credentials, and how to develop against an emulator instead. Names no credential values.
 */
public class GcsLockCredentialsFailureAnalyzer implements FailureAnalyzer {

    /** The start of the message of google-auth-library's {@code DefaultCredentialsProvider}. */
    static final String NO_DEFAULT_CREDENTIALS = "Your default credentials were not found";

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains(NO_DEFAULT_CREDENTIALS)) {
                return new FailureAnalysis(description(), action(), failure);
            }
        }
        return null;
    }

    private static String description() {
        return "gcslock could not start: no Google Cloud credentials were found, so the GCS client cannot be created. "
                + "Application Default Credentials were looked for in GOOGLE_APPLICATION_CREDENTIALS ("
                + (System.getenv("GOOGLE_APPLICATION_CREDENTIALS") == null ? "not set" : "set, but not usable")
                + "), in gcloud's application-default login, and on the metadata server of GCE, GKE or Cloud Run "
                + "(not reachable from here).";
    }

    private static String action() {
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
