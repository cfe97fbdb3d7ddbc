package io.github.gcslock.autoconfigure;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.NoCredentials;
import com.google.cloud.storage.Bucket;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import io.github.gcslock.GcsLockException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.Environment;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Explains a bucket that gcslock refused at start-up (missing, retention policy, event-based hold). On a standalone
 * emulator ({@code gcslock.emulator.endpoint}) a missing bucket is most likely a misspelt name: the report lists
 * the emulator's buckets, names the nearest one and says how to create the bucket there, with no GCP advice.
 */
public class GcsLockStartupFailureAnalyzer extends AbstractFailureAnalyzer<GcsLockException> {

    /** The engine's message for a bucket that does not exist (BucketCheck). */
    private static final Pattern MISSING_BUCKET = Pattern.compile("bucket '([^']*)' does not exist");

    private final Environment environment;

    /** @param environment the application's, to tell whether an emulator is used */
    public GcsLockStartupFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    /** Without an environment: every report is the one for real GCS. */
    GcsLockStartupFailureAnalyzer() {
        this(null);
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, GcsLockException cause) {
        String endpoint = environment == null ? null : environment.getProperty("gcslock.emulator.endpoint");
        Matcher missing = MISSING_BUCKET.matcher(String.valueOf(cause.getMessage()));
        if (endpoint != null && !endpoint.isBlank() && missing.find()) {
            return onEmulator(cause, endpoint, missing.group(1));
        }
        return new FailureAnalysis("gcslock could not start: " + cause.getMessage(),
                "Check gcslock.bucket: the bucket must exist, be readable by this application's identity, and have "
                        + "no retention policy or default event-based hold. For local development without GCP, set "
                        + "gcslock.emulator.embedded=true (with gcslock-test on the class path) or gcslock.emulator.endpoint.",
                cause);
    }

    private FailureAnalysis onEmulator(GcsLockException cause, String endpoint, String bucket) {
        String project = environment.getProperty("gcslock.emulator.project-id", "gcslock-emulator");
        List<String> buckets = new ArrayList<>();
        String listed;
        try {
            bucketsOf(endpoint, project).forEach(b -> buckets.add(b.getName()));
            listed = buckets.isEmpty() ? "The emulator at " + endpoint + " has no bucket."
                    : "The emulator at " + endpoint + " has the bucket" + (buckets.size() == 1 ? " " : "s ")
                    + String.join(", ", buckets) + ".";
        } catch (RuntimeException e) {
            listed = "The emulator at " + endpoint + " did not list its buckets (" + e.getMessage() + ").";
        }
        String nearest = UnknownPropertyCheck.nearest(bucket, buckets);
        return new FailureAnalysis("gcslock could not start: the bucket '" + bucket + "' (gcslock.bucket) does not exist "
                + "on the GCS emulator at " + endpoint + ". " + listed
                + (nearest != null ? " Did you mean gcslock.bucket=" + nearest + "?" : ""),
                (nearest != null ? "Set gcslock.bucket=" + nearest + ", or create" : "Set gcslock.bucket to one of the "
                        + "emulator's buckets, or create") + " the bucket '" + bucket + "' on the emulator: start the "
                        + "standalone emulator with --bucket " + bucket + " (repeatable: --bucket a --bucket b), or create "
                        + "it while the emulator runs:\n"
                        + "    curl -X POST -H 'Content-Type: application/json' -d '{\"name\":\"" + bucket + "\"}' '"
                        + endpoint.replaceAll("/+$", "") + "/storage/v1/b?project=" + project + "'",
                cause);
    }

    /** The buckets of the emulator at {@code endpoint}: one attempt, a few seconds at most. */
    private static Iterable<Bucket> bucketsOf(String endpoint, String project) {
        RetrySettings once = RetrySettings.newBuilder().setMaxAttempts(1).setTotalTimeoutDuration(Duration.ofSeconds(5))
                .setInitialRpcTimeoutDuration(Duration.ofSeconds(5)).setMaxRpcTimeoutDuration(Duration.ofSeconds(5)).build();
        Storage storage = StorageOptions.http().setHost(endpoint).setProjectId(project)
                .setCredentials(NoCredentials.getInstance()).setRetrySettings(once).build().getService();
        return storage.list().iterateAll();
    }
}
