package io.github.gcslock.autoconfigure;

import io.github.gcslock.autoconfigure.UnknownPropertyCheck.UnknownGcsLockPropertyException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a key under {@code gcslock.} that no gcslock property has ({@link UnknownPropertyCheck}): which key,
 * where it was set, and the nearest valid key ("did you mean gcslock.ttl?").
 */
public class GcsLockUnknownPropertyFailureAnalyzer extends AbstractFailureAnalyzer<UnknownGcsLockPropertyException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnknownGcsLockPropertyException cause) {
        String renames = String.join(", ", cause.renames());
        return new FailureAnalysis("gcslock is misconfigured: " + String.join("\n", cause.lines()),
                Character.toUpperCase(renames.charAt(0)) + renames.substring(1) + ". gcslock refuses a key under gcslock. "
                        + "that it does not know rather than run on the default the key meant to change; the README's "
                        + "Properties section lists the valid keys, and an IDE completes them from gcslock's configuration metadata.",
                cause);
    }
}
