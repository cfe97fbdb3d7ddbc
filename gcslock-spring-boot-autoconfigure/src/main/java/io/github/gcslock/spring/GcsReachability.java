package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.RequestOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Whether the last GCS request of this instance got an answer, and if not since when requests fail: the state
 * behind the {@code gcs} detail of the {@code gcsLock} health and the "reachable again" log line. Kept in one
 * place, from the registries' request events only ({@link #requestCompleted}), which every path reports:
 * {@code @GcsLocked}, ShedLock's {@code lock()}, Spring Integration locks, direct {@code LockRegistry} calls,
 * refreshes, releases and the endpoint's reads, of every {@code GcsLockRegistry} bean. So any answered request ends
 * an outage (a release's DELETE too), a call that sends no request (a reentrant hold) changes nothing, and a lost
 * lease, which GCS reported by answering, is not an outage. Reads only local state.
 *
 * <p>"Last" is the request sent last, not the outcome told last. Outcomes arrive out of order: each lock's events
 * reach a listener on a channel of its own (DESIGN.md rule 20), so an answer can be told after a request sent later
 * failed, and a request that timed out is told after a request sent later was answered. Each outcome carries the
 * JVM-wide sequence its request took when it was sent ({@link RequestOutcome#sequence()}, shared by every registry
 * of the JVM, so the application's own registries are ordered with the auto-configured one). An answer ends an
 * outage only if it was sent after every failure told so far, and a failure starts one only if it was sent after
 * every answer told so far: the state is that of the latest-sent request whose outcome is known, whatever the order
 * of telling. A reply that came slowly tells of GCS when its request was sent; a request sent after it decides.
 */
public class GcsReachability implements LockEventListener {

    private static final Logger log = LoggerFactory.getLogger(GcsReachability.class);

    /** An outage: calls have failed since {@code since}, {@code failures} of them, the last with {@code lastError}. */
    public record Outage(Instant since, long failures, String lastError, Instant lastErrorAt) {
    }

    private final Clock clock;
    private Outage outage; // guarded by this
    /** The sequence of the latest-sent request told as answered; none yet: MIN_VALUE. Guarded by this. */
    private long newestAnswered = Long.MIN_VALUE;
    /** The sequence of the latest-sent request told as failed; none yet: MIN_VALUE. Guarded by this. */
    private long newestFailed = Long.MIN_VALUE;

    public GcsReachability() {
        this(Clock.systemUTC());
    }

    GcsReachability(Clock clock) {
        this.clock = clock;
    }

    /** The ongoing outage, or empty when the latest-sent request whose outcome is known reached GCS. */
    public synchronized Optional<Outage> outage() {
        return Optional.ofNullable(outage);
    }

    /**
     * A GCS call failed with {@code error}, learnt outside a registry's request events (another {@code LockRegistry}
     * sends none): placed among them as a request sent now. Returns the outage it belongs to.
     */
    public Outage failed(Throwable error) {
        return failed(error, RequestOutcome.nextSequence());
    }

    /** A GCS call got an answer, learnt outside a registry's request events: as a request sent now, it ends an outage. */
    public void reached() {
        reached(RequestOutcome.nextSequence());
    }

    /**
     * The request sent as {@code sequence} failed with {@code error}: an outage starts unless a request sent after it
     * was answered (its failure is older news); during an outage it is counted. Returns the outage, or null when GCS
     * was reachable and stays so.
     */
    synchronized Outage failed(Throwable error, long sequence) {
        newestFailed = Math.max(newestFailed, sequence);
        if (outage == null && sequence < newestAnswered) {
            return null; // sent before a request that was answered: GCS answered since
        }
        Instant now = clock.instant();
        String message = describe(error);
        outage = outage == null ? new Outage(now, 1, message, now)
                : new Outage(outage.since(), outage.failures() + 1, message, now);
        return outage;
    }

    /**
     * The request sent as {@code sequence} got an answer: ends an outage, logging one line, unless a request sent after
     * it failed (its answer is older news: told late, or a slow reply).
     */
    void reached(long sequence) {
        Outage ended;
        synchronized (this) {
            newestAnswered = Math.max(newestAnswered, sequence);
            if (sequence < newestFailed) {
                return; // sent before a request that failed: what GCS says now is that later failure
            }
            ended = outage;
            outage = null;
        }
        if (ended != null) {
            log.info("gcslock: GCS is reachable again after {} ({} failed call(s) since {}; last error: {})",
                    human(Duration.between(ended.since(), clock.instant())), ended.failures(), ended.since(), ended.lastError());
        }
    }

    /** Orders the outcome among those already told by its request's sequence (see the class comment). */
    @Override
    public void requestCompleted(RequestOutcome outcome) {
        if (outcome.answered()) {
            reached(outcome.sequence());
        } else {
            failed(outcome.error(), outcome.sequence());
        }
    }

    /** An answer without a stamp (a caller of this method, not a registry, which tells {@link #requestCompleted}): as sent now. */
    @Override
    public void requestAnswered(String name) {
        reached();
    }

    /** A failure without a stamp (a caller of this method, not a registry): as sent now. */
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
