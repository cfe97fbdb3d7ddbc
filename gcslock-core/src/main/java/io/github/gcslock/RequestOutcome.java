package io.github.gcslock;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The outcome of one GCS request of a {@link GcsLockRegistry}, told to {@link LockEventListener#requestCompleted}:
 * answered ({@link #error()} null) or failed, stamped with the request's place in the order in which this JVM sent
 * its GCS requests.
 *
 * <p>The {@link #sequence()} is taken from one counter shared by every registry of the JVM, just before the request
 * is sent (once per request: a listing's every page, each attempt of an acquiring wait; the client's own retries of
 * one request within the operation timeout are that request). Of two requests, whichever registries sent them, the
 * one sent later has the greater sequence. Outcomes are told in the order in which they are delivered, which is not
 * the order of the requests: each lock's events reach a listener on a channel of its own (DESIGN.md rule 20), and a
 * request that timed out is told long after a later one was answered. A listener that keeps a state from the
 * outcomes (is GCS reachable?) orders them by sequence: an outcome whose sequence is below that of an outcome it
 * already holds is older news.
 *
 * @param name     the lock the request was about; null for a listing or the bucket check
 * @param sequence the request's place in the JVM-wide order of sending: greater for a request sent later; not a
 *                 time, and not comparable across JVMs
 * @param error    null when GCS answered (an object, 404, 409, 412, any reply); else what the caller of the request
 *                 sees, with GCS's error as its cause (no reply, a timeout, 408, 429, 5xx, 401 or 403)
 */
public record RequestOutcome(String name, long sequence, GcsLockException error) {

    private static final AtomicLong SENT = new AtomicLong();

    /** Whether GCS answered the request, whatever it said. */
    public boolean answered() {
        return error == null;
    }

    /** Whether this request was sent after {@code other}. */
    public boolean sentAfter(RequestOutcome other) {
        return sequence > other.sequence;
    }

    /**
     * Takes the next number of the JVM-wide request sequence, as a registry does just before it sends a request. For
     * a listener that learns of an outcome outside a registry's requests (another {@link LockRegistry}'s failure) and
     * places it among them as sent now.
     *
     * @return a number greater than every one taken before in this JVM (by this class's loader)
     */
    public static long nextSequence() {
        return SENT.incrementAndGet();
    }
}
