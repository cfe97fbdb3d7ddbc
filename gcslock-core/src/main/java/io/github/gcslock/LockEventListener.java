package io.github.gcslock;

import java.time.Duration;

/**
 * Told about what the registry does, for metrics, events and logs. Every method has an empty default.
 *
 * <p>Threads: {@link #acquireStarted}, {@link #acquireFinished}, {@link #acquired}, {@link #notAcquired} and {@link #tookOver}
 * run on the thread that asked for the lock, before its call returns, unless queued (below). {@link #refreshed},
 * {@link #refreshFailed} and {@link #lost} run on the registry's listener threads, never on the threads
 * that refresh leases or enforce deadlines, so a slow listener (an alert sent over HTTP) delays no
 * lease's refresh nor its LOST transition. {@link #released} runs on the releasing thread when that is
 * an application thread and nothing of the lock is still being reported, else on a listener thread.
 * The events of one lock are delivered one at a time, in the order they happened, across its leases
 * too: when a thread asks for the lock while a previous lease's events are still being delivered to a
 * listener (a slow {@link #lost} listener, its {@link #released}), that listener's {@link #acquireStarted},
 * {@link #tookOver}, {@link #fencingTokenRegression}, {@link #acquired} or {@link #notAcquired}, and
 * {@link #acquireFinished} are queued behind them and run on a listener thread, after the call returned; an
 * acquiring thread never waits for listeners. Likewise, while the acquiring thread is still busy telling another
 * listener (one that blocks there), a later event of the lock for a listener it has not reached yet (a refresh of the
 * new lease, its loss) makes a listener thread take over that listener's pending acquisition events and tell them
 * first, so that they never hold the later event back. A slow listener of one lock does not delay the events of another.
 * A listener registered twice is told each event twice, each registration in its own order.
 *
 * <p>Every listener is told every event, whatever another listener threw. Exceptions thrown by a listener are
 * logged and ignored, except an {@link Error} thrown on the acquiring thread ({@link #acquireStarted},
 * {@link #fencingTokenRegression}, {@link #acquired} or {@link #acquireFinished} when it runs there): once every
 * listener has been told, the Error reaches the caller, and a lease the call would have returned is released first (a
 * call that failed never leaves a lease held; every listener is told its {@link #acquired} before its
 * {@link #released}, also when the Error was thrown in {@link #fencingTokenRegression}). An event queued behind a previous lease's events runs after the call
 * returned, and so does one a listener thread took over: an Error there is logged, and the lease stays held.
 *
 * <p>Events of different locks are not told in the order they happened: each lock (and a listing) is a channel of
 * its own, and a request's outcome is known only when its reply came or its timeout ran out. A listener that keeps
 * one state from the outcomes of requests about several locks (is GCS reachable?) orders them by the stamp of
 * {@link #requestCompleted}, not by when it is told.
 */
public interface LockEventListener {

    /**
     * A {@code tryAcquire} ({@link AcquireMode#TRY}) or {@code acquire} ({@link AcquireMode#WAIT}) call starts
     * asking for the lock: called synchronously on the calling thread once the call is known not to be a
     * reentrant hold, before any wait or GCS request. If this callback itself takes the lock on the calling thread for
     * the call's owner (a plain {@code tryAcquire} here), the call becomes a reentrant hold of that lease, finished
     * {@link AcquireOutcome#ACQUIRED} without an {@link #acquired} of its own. {@link #acquireFinished} always follows for the
     * same call, on the same thread — unless this listener still had earlier events of the lock to be told (a
     * previous lease's, or a refresh of the new lease raised first), or a later event of the lock arrived for this
     * listener while the calling thread was still telling another one: then either runs on a listener thread, in
     * order, possibly after the call returned (see above; {@code took} is the acquisition's all the same).
     *
     * @param name the lock name
     * @param mode how the call asks: one attempt, or waiting up to its limit
     */
    default void acquireStarted(String name, AcquireMode mode) {
    }

    /**
     * A {@code tryAcquire} or {@code acquire} call ended (not for reentrant holds, except one that an
     * {@link #acquireStarted} listener made reentrant by taking the lock itself), on the calling thread
     * before the call returns or throws, unless queued behind this listener's earlier events of the lock (see above). Also called without a preceding {@link #acquireStarted} when the
     * call failed before asking (bad input, closed registry). A listener added while a call is in flight is not told
     * that call's {@code acquireFinished}, as it was not told its {@link #acquireStarted}: each call's pair goes to the
     * listeners registered when it started.
     *
     * @param name    the lock name
     * @param outcome {@link AcquireOutcome#ACQUIRED}; {@link AcquireOutcome#BUSY} (tryAcquire found it held);
     *                {@link AcquireOutcome#TIMEOUT} (acquire's wait ran out); {@link AcquireOutcome#ERROR}
     *                (GCS could not be asked, bad input, a closed registry, an interrupt)
     * @param took    from the start of the call until now
     */
    default void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
    }

    /** A lease was acquired (not for reentrant holds). */
    default void acquired(Lease lease) {
    }

    /**
     * This process acquired {@code lease} with a fencing token (the object's GCS generation) not greater
     * than {@code highestSeenBefore}, a generation it saw earlier for the same name. GCS documents
     * generations as unique, not as increasing, so this is possible in principle; a fenced resource that
     * refuses tokens below the last it accepted would refuse this holder's writes (safe, but worth an
     * alert). Runs before {@link #acquired}, on the acquiring thread unless queued behind a previous lease's
     * events (see above). Logged at WARN as well.
     */
    default void fencingTokenRegression(Lease lease, long highestSeenBefore) {
    }

    /** An attempt ended without the lock because someone else holds it. */
    default void notAcquired(String name, LockInfo holder) {
    }

    /** A stale lock object (its holder stopped refreshing) was deleted so that it could be taken over. */
    default void tookOver(String name, LockInfo staleHolder) {
    }

    /** A refresh was confirmed by GCS. */
    default void refreshed(Lease lease) {
    }

    /** A refresh failed with a transient error; the lease stays healthy until failures reach the limit. */
    default void refreshFailed(Lease lease, Exception error) {
    }

    /** A lease was lost. */
    default void lost(Lease lease, LockLostException reason) {
    }

    /** A lease was released (its lock object deleted, or found already gone or taken over). */
    default void released(Lease lease) {
    }

    /**
     * GCS answered a request of this registry, whatever the answer: an object, 404, 409 or 412 (a lock held
     * elsewhere, a refresh that found the lease lost, a release's DELETE). Every request of every path reports
     * here (acquire, refresh, release, inspect, list, a ShedLock or Spring Integration lock on this registry),
     * and a call that sends no request (a reentrant hold) reports nothing. For reachability: an outage ends with
     * the first answered request. Runs on the requesting thread when that is an application thread, else on the
     * listener threads; keep it quick, it is called for every request.
     *
     * <p>Called by the default {@link #requestCompleted}: a listener that overrides that method is told here only
     * if it calls it.
     *
     * @param name the lock the request was about; null for a listing or the bucket check
     */
    default void requestAnswered(String name) {
    }

    /**
     * A request of this registry got no usable answer: no reply or a timeout (after the client's own retries
     * within the operation timeout), 408, 429 or 5xx, or 401/403 (this identity is refused). Not called for
     * an interrupted request. Threads as for {@link #requestAnswered}. Called by the default
     * {@link #requestCompleted}, as {@link #requestAnswered} is.
     *
     * @param name  the lock the request was about; null for a listing or the bucket check
     * @param error what the caller of the request sees, with GCS's error as its cause
     */
    default void requestFailed(String name, GcsLockException error) {
    }

    /**
     * A request of this registry was answered or failed, as {@link #requestAnswered} and {@link #requestFailed} tell
     * it, with the request's stamp: its {@link RequestOutcome#sequence()}, taken from one JVM-wide counter just
     * before the request was sent, orders the outcomes of every registry of the JVM by when their requests were sent.
     * Told once per request, on the same threads and at the same moment as those two; the outcomes of different locks
     * (and of a listing) are told in no particular order among each other: a listener that keeps one state from them
     * lets an outcome change it only if no outcome of a request sent later is known (an answer told late, after a
     * later request failed, is older news; so is a timeout told after a later request was answered).
     *
     * <p>The default calls {@link #requestAnswered} or {@link #requestFailed}, so a listener that overrides those
     * is told as before. Override this instead of them to see the stamp.
     *
     * @param outcome the request's lock (null for a listing or the bucket check), its sequence, and its error (null
     *                when GCS answered)
     */
    default void requestCompleted(RequestOutcome outcome) {
        if (outcome.answered()) {
            requestAnswered(outcome.name());
        } else {
            requestFailed(outcome.name(), outcome.error());
        }
    }
}
