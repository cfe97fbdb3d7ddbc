package io.github.gcslock.autoconfigure;

import io.github.gcslock.GcsLockException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Explains a bucket that gcslock refused at start-up (missing, retention policy, event-based hold). */
public class GcsLockStartupFailureAnalyzer extends AbstractFailureAnalyzer<GcsLockException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, GcsLockException cause) {
        return new FailureAnalysis("gcslock could not start: " + cause.getMessage(),
                "Check gcslock.bucket: the bucket must exist, be readable by this application's identity, and have "
                        + "no retention policy or default event-based hold. For local development without GCP, set "
                        + "gcslock.emulator.embedded=true (with gcslock-test on the class path) or gcslock.emulator.endpoint.",
                cause);
    }
}
