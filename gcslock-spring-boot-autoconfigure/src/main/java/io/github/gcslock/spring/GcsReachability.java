package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.LockEventListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Whether the last GCS request of this instance got an answer, and if not since when requests fail: the state
 * behind the {@code gcs} detail of the {@code gcsLock} health and the "reachable again" log line. Kept in one
 * place, from the registry's request events only ({@link #requestAnswered}, {@link #requestFailed}), which every
 * path reports: {@code @GcsLocked}, ShedLock's {@code lock()}, Spring Integration locks, direct
 * {@code LockRegistry} calls, refreshes, releases and the endpoint's reads. So any answered request ends an
 * outage (a release's DELETE too), a call that sends no request (a reentrant hold) changes nothing, and a lost
 * lease, which GCS reported by answering, is not an outage. Reads only local state.
 */
public class GcsReachability implements LockEventListener {

    private static final Logger log = LoggerFactory.getLogger(GcsReachability.class);

    /** An outage: calls have failed since {@code since}, {@code failures} of them, the last with {@code lastError}. */
    public record Outage(Instant since, long failures, String lastError, Instant lastErrorAt) {
    }

    private final Clock clock;
    private Outage outage; // guarded by this

    public GcsReachability() {
        this(Clock.systemUTC());
    }

    GcsReachability(Clock clock) {
        this.clock = clock;
    }

    /** The ongoing outage, or empty when the last call reached GCS. */
    public synchronized Optional<Outage> outage() {
        return Optional.ofNullable(outage);
    }

    /** A GCS request failed with {@code error}; returns the outage it belongs to. */
    public synchronized Outage failed(Throwable error) {
        Instant now = clock.instant();
        String message = describe(error);
        outage = outage == null ? new Outage(now, 1, message, now)
                : new Outage(outage.since(), outage.failures() + 1, message, now);
        return outage;
    }

    /** A GCS call got an answer: ends an outage, logging one line. */
    public void reached() {
        Outage ended;
        synchronized (this) {
            ended = outage;
            outage = null;
        }
        if (ended != null) {
            log.info("gcslock: GCS is reachable again after {} ({} failed call(s) since {}; last error: {})",
                    human(Duration.between(ended.since(), clock.instant())), ended.failures(), ended.since(), ended.lastError());
        }
    }

    @Override
    public void requestAnswered(String name) {
        reached();
    }

    @Override
    public void requestFailed(String name, GcsLockException error) {
        failed(error);
    }

    /** One line: the error and its innermost cause, e.g. "could not reach GCS ... (UnknownHostException: storage.googleapis.com)". */
    static String describe(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = String.valueOf(error.getMessage());
        if (root != error) {
            String rootMessage = root.getMessage() == null ? null : root.getMessage().lines().findFirst().orElse("").trim();
            String rootText = root.getClass().getSimpleName() + (rootMessage != null ? ": " + rootMessage : "");
            if (!message.contains(rootText)) {
                message += " (" + rootText + ")";
            }
        }
        return message.replaceAll("\\s*\\R\\s*", " ");
    }

    private static String human(Duration d) {
        return d.toSeconds() < 1 ? d.toMillis() + "ms" : d.toSeconds() + "s";
    }
}
