package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.StorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps held leases alive: every refresh interval it PATCHes each lock object's metadata (which bumps
 * {@code updated}, the timestamp others judge staleness by) and adopts a refresh of ours whose reply was lost
 * (rule 7). One timer thread, which never does I/O, starts each lease's refresh when it is due; the request
 * itself runs on {@link RefreshThreads}, which grows with the refreshes in flight, so no lease's refresh waits
 * behind another's slow request. A lease's refreshes come at a fixed rate from a jittered first one, so its
 * period is its interval whatever the reply time, and leases acquired together do not refresh in one burst
 * (DESIGN.md "Refresh capacity"). It also arms a deadline per lease that declares the lease lost when no
 * refresh has been confirmed for {@code ttl - safetyMargin}, before anyone else may take the lock over
 * (rule 11), and runs delayed releases. No refresh is sent within the write window of this process's previous
 * write to the same object (rule 21): it is scheduled for the window's end, which must come before the deadline.
 */
final class LeaseKeeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    /** A lease's first refresh comes after a random share in [1 - FIRST_REFRESH_SPREAD, 1] of its interval. */
    static final double FIRST_REFRESH_SPREAD = 0.5;
    /** How long a refresh thread stays when idle. */
    private static final Duration IDLE_THREAD_KEEP_ALIVE = Duration.ofSeconds(60);

    /** What the keeper needs from the engine. */
    interface Engine {
        /** The registry's monotonic clock, in nanoseconds. */
        long nanoTime();

        /** GCS time as well as this process can tell. */
        Instant estimatedGcsNow();

        /** Whether {@code object} was written by this process for {@code leaseId}. */
        boolean isOurs(Blob object, String leaseId);

        /** The store whose calls fit the deadline of a lease of {@code timing} (rule 15). */
        LockStore storeFor(LeaseTiming timing);

        /** How long one call of {@link #storeFor}{@code (timing)} may take at most (rule 15). */
        Duration callBound(LeaseTiming timing);

        Listeners listeners();
    }

    private final Engine engine;
    private final Duration interval;
    private final int maxFailures;
    /** GCS's one write per second to one object (rule 21): no write of ours to an object within this of our last. */
    private final long writeWindowNanos;
    /** Threads and timed waits (real, unless a test substitutes virtual time). */
    private final EngineRuntime runtime;
    /** Starts refreshes and delayed releases when they are due; never does I/O itself. */
    private final ScheduledExecutorService timer;
    /** Sends refreshes and runs delayed releases: grows with the demand, up to {@code refresherThreads}. */
    private final ExecutorService refreshers;
    /**
     * Declares leases LOST at their deadline. Its own thread, which never does I/O nor waits for a lock
     * an I/O call holds: a refresh hanging for the whole operation timeout on every refresher thread
     * must not delay any lease's LOST transition past its deadline (rule 11).
     */
    private final ScheduledExecutorService deadlines;
    /** The writes per second each lease on a refresh schedule needs (in millionths), and their sum. */
    private final Map<GcsLease, Long> writeRates = new ConcurrentHashMap<>();
    private final AtomicLong writeRateSum = new AtomicLong();
    private final RefreshRateWarning rateWarning;

    /** Time between refreshes of one lease. */
    Duration interval() {
        return interval;
    }

    LeaseKeeper(Engine engine, Duration interval, int maxFailures, Duration writeRateWindow, int maxThreads,
                RefreshRateWarning rateWarning) {
        this(engine, interval, maxFailures, writeRateWindow, maxThreads, rateWarning, EngineRuntime.REAL);
    }

    LeaseKeeper(Engine engine, Duration interval, int maxFailures, Duration writeRateWindow, int maxThreads,
                RefreshRateWarning rateWarning, EngineRuntime runtime) {
        this.runtime = runtime;
        this.engine = engine;
        this.interval = interval;
        this.maxFailures = maxFailures;
        this.writeWindowNanos = writeRateWindow.toNanos();
        this.rateWarning = rateWarning;
        this.timer = runtime.timer(daemon("gcslock-refresh-timer", null));
        this.refreshers = runtime.refreshThreads(maxThreads, IDLE_THREAD_KEEP_ALIVE, refresherThreads());
        this.deadlines = runtime.timer(daemon("gcslock-deadline", null));
    }

    /**
     * The refresher's threads, each marked as this keeper's for its whole life ({@link #onOwnRefresherThread}): close()
     * must know its own refresher threads, not every thread named like one — another registry's refresher, or this
     * one's timer, is not one of them (rule 14).
     */
    private ThreadFactory refresherThreads() {
        ThreadFactory named = daemon("gcslock-refresh-", new AtomicInteger());
        return task -> named.newThread(() -> {
            refresherOf.set(this);
            task.run();
        });
    }

    /** The keeper whose refresher runs on the current thread (none elsewhere). */
    private static final ThreadLocal<LeaseKeeper> refresherOf = new ThreadLocal<>();

    private static ThreadFactory daemon(String name, AtomicInteger numbered) {
        return r -> {
            Thread t = new Thread(LockEventDispatcher.engineThread(r), numbered == null ? name : name + numbered.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    void start(GcsLease lease) {
        long period = lease.refreshInterval().toNanos();
        // Jittered first refresh, never later than one interval after the write that created the object (rule 10's
        // count and rule 11's deadline assume at most one interval between refreshes): leases acquired together spread
        // over half an interval. Counted from that write (the lease's last confirmed one), not from now: the hand-out
        // can come seconds after the create was sent (a slow reply, a request listener blocking on the acquiring
        // thread), and the deadline counts from the send, so a first refresh one interval after the hand-out could
        // come after the deadline and lose a lease with no fault (found by the interleaving explorer, issue 29). If
        // that moment has passed, the refresh goes out at once (after the write window, rule 21).
        double share = 1 - FIRST_REFRESH_SPREAD * runtime.random().nextDouble();
        scheduleRefresh(lease, Math.min(engine.nanoTime(), lease.lastConfirmedNanos()) + (long) (period * share));
        armDeadline(lease);
    }

    /** What one refresh achieved. */
    enum Refresh {
        /** This refresh's own PATCH is in the object (its TTL too): confirmed. */
        OWN,
        /** GCS said 412 and the object carries an earlier refresh of ours, adopted (rule 8): alive, but not this TTL. */
        ADOPTED_EARLIER,
        /** Not confirmed (an error, or the lease is lost or released). */
        FAILED
    }

    /**
     * Renewal: refreshes {@code lease} now, writing {@code next} (its new TTL) into the lock object, then goes on
     * at the cadence of the TTL in force with the deadline re-armed. True only if this renewal's own write, with
     * {@code next}'s TTL, reached the object: after adopting an earlier refresh of ours (rule 8) it writes once
     * more. False if it did not: then the renewal changed nothing — refreshes go on writing the TTL they wrote
     * before, at its cadence (a failed renewal to a longer TTL must not leave the lease with the longer TTL's
     * interval and the shorter TTL's deadline).
     */
    boolean refreshNow(GcsLease lease, LeaseTiming next) {
        // One renewal at a time per lease, from its retarget to its last write: two renewals that both retargeted
        // before either wrote would each send the *last* target, so renew(lease, 2 s) could return with another
        // renewal's 30 s in the object. The I/O lock is reentrant: refresh() takes it again.
        lease.lockIo();
        try {
            LeaseTiming before = lease.target();
            lease.retarget(next);
            lease.newRefreshChain(); // a refresh running right now does not reschedule itself
            lease.cancelRefresh();
            boolean confirmed = false;
            try {
                Refresh done = refresh(lease);
                if (done == Refresh.ADOPTED_EARLIER) {
                    // The object is alive but carries an earlier refresh's TTL: returning now would tell the caller its
                    // TTL is in force while others still judge the object by the old one. We know its metageneration now.
                    done = refresh(lease);
                }
                confirmed = done == Refresh.OWN;
            } finally {
                if (!confirmed) {
                    lease.retargetBack(next, before);
                }
                scheduleRefresh(lease, engine.nanoTime() + lease.refreshInterval().toNanos());
                rearmDeadline(lease); // a shorter TTL may have moved the deadline closer
            }
            return confirmed;
        } finally {
            lease.unlockIo();
        }
    }

    /** The timing with the shorter TTL: its calls must fit the tighter deadline (rule 15). */
    private static LeaseTiming shorterOf(LeaseTiming a, LeaseTiming b) {
        return a.ttl().compareTo(b.ttl()) <= 0 ? a : b;
    }

    private void rearmDeadline(GcsLease lease) {
        lease.cancelDeadline();
        armDeadline(lease);
    }

    /** Runs {@code task} after {@code delay} on a refresh thread (used for deferred releases). */
    void schedule(Runnable task, Duration delay) {
        // a delay beyond what nanoseconds can count (ChronoUnit.FOREVER, centuries) waits as long as a long can say
        long nanos = delay.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : delay.toNanos();
        timer.schedule(() -> dispatch(task), nanos, TimeUnit.NANOSECONDS);
    }

    void stop(GcsLease lease) {
        lease.cancelRefresh();
        lease.cancelDeadline();
        forgetWriteRate(lease);
    }

    /** Threads that send refreshes now. */
    int threadCount() {
        return refreshers instanceof ThreadPoolExecutor pool ? pool.getPoolSize() : 0;
    }

    /** GCS writes per second that the leases on a refresh schedule need: one PATCH per lease per interval. */
    double refreshRate() {
        return writeRateSum.get() / 1e6;
    }

    /**
     * Schedules the lease's next refresh at {@code dueNanos} (the registry's monotonic clock), on the lease's
     * current chain. A lease no longer held leaves the write rate.
     */
    private void scheduleRefresh(GcsLease lease, long dueNanos) {
        if (lease.state() != GcsLease.State.ACTIVE || lease.isReleasing() || timer.isShutdown()) {
            forgetWriteRate(lease);
            return;
        }
        countWriteRate(lease, period(lease));
        int chain = lease.refreshChain();
        // Rule 21: not within the write window of our last write to the object (the create, a renewal, the previous
        // refresh), but at its end -- or at the latest send that can still be confirmed before the deadline, if that
        // comes first (rule 11 before rule 21, see #windowWaitEnd); the fixed rate goes on from there.
        long at = later(dueNanos, windowWaitEnd(lease));
        long delay = Math.max(0, at - engine.nanoTime());
        lease.refreshScheduled(timer.schedule(() -> dispatch(() -> refreshAndReschedule(lease, chain, at)),
                delay, TimeUnit.NANOSECONDS));
    }

    /** The time between two refreshes of {@code lease}: its refresh interval, at least one write window (rule 21). */
    private Duration period(GcsLease lease) {
        Duration d = lease.refreshInterval();
        return d.toNanos() < writeWindowNanos ? Duration.ofNanos(writeWindowNanos) : d;
    }

    /** The earliest time the next write of ours to the lease's object may be sent (rule 21). */
    private long windowEnd(GcsLease lease) {
        return lease.lastWriteNanos() + writeWindowNanos;
    }

    /**
     * Until when a refresh of {@code lease} waits for the write window (rule 21): the window's end, but never past
     * the latest send whose call, bounded by rule 15, still returns before the lease's deadline (rule 11).
     *
     * <p>The race this settles: the window counts from the end of our previous call, and the deadline from that
     * call's send. With a slow but healthy GCS (reply time r, per-call bound c, window w, deadline span S) a refresh
     * waiting out the whole window is confirmed at best r + w + r after the previous one was sent; once that passes
     * S the lease is lost with no fault at all, where sending at once would have kept it. Rule 11 comes first: a
     * refresh is sent no later than deadline - c, even inside the window, and a write of ours GCS then refuses with
     * 429 is retried by the client within the same bound c (rule 15). With ordinary round trips it is not reached
     * (TTL 8 s, the 1 s window, 30 ms replies: the cap is 3.7 s after a confirmed refresh, the window's end 1.03 s).
     */
    private long windowWaitEnd(GcsLease lease) {
        long latestSend = lease.deadlineNanos() - engine.callBound(shorterOf(lease.target(), lease.timing())).toNanos();
        return earlier(windowEnd(lease), latestSend);
    }

    private static long earlier(long a, long b) {
        return a - b <= 0 ? a : b;
    }

    private static long later(long a, long b) {
        return a - b >= 0 ? a : b;
    }

    /**
     * Waits, holding the lease's I/O lock, until the write window of our last write to its object has passed
     * (rule 21): a renewal right after a refresh, a refresh right after a renewal or the create -- but no longer
     * than the latest send that can still be confirmed before the lease's deadline (rule 11, {@link #windowWaitEnd}).
     * False if the lease stopped being ACTIVE meanwhile. The wait is on the registry's clock, ignores interrupts and
     * gives the flag back.
     */
    private boolean awaitWriteWindow(GcsLease lease) {
        long end = windowWaitEnd(lease);
        if (end - engine.nanoTime() <= 0) {
            return true;
        }
        if (runtime.sleepUntilIgnoringInterrupts(end, engine::nanoTime)) {
            Thread.currentThread().interrupt();
        }
        return lease.state() == GcsLease.State.ACTIVE && !lease.isReleasing();
    }

    /** Hands a due task to the refresh threads: the timer thread itself never waits for I/O. */
    private void dispatch(Runnable task) {
        try {
            refreshers.execute(task);
        } catch (RejectedExecutionException e) {
            log.debug("refresh thread pool closed; task dropped", e); // close() ran: nothing is refreshed any more
        }
    }

    private void countWriteRate(GcsLease lease, Duration period) {
        long rate = (long) (1e15 / Math.max(1, period.toNanos())); // millionths of a write per second
        Long before = writeRates.put(lease, rate);
        if (before == null || before != rate) {
            long sum = writeRateSum.addAndGet(rate - (before == null ? 0 : before));
            rateWarning.check(sum / 1e6, writeRates.size());
        }
    }

    private void forgetWriteRate(GcsLease lease) {
        Long before = writeRates.remove(lease);
        if (before != null) {
            rateWarning.check(writeRateSum.addAndGet(-before) / 1e6, writeRates.size());
        }
    }

    private void armDeadline(GcsLease lease) {
        if (lease.state() != GcsLease.State.ACTIVE || lease.isReleasing() || deadlines.isShutdown()) {
            return;
        }
        long delay = lease.deadlineNanos() - engine.nanoTime();
        lease.deadlineArmed(deadlines.schedule(() -> {
            if (lease.isReleasing() || lease.state() != GcsLease.State.ACTIVE) {
                return;
            }
            if (engine.nanoTime() - lease.deadlineNanos() >= 0) {
                lease.markLost(lease.deadlineReason());
            } else {
                armDeadline(lease); // a refresh moved the deadline on
            }
        }, Math.max(0, delay), TimeUnit.NANOSECONDS));
    }

    private void refreshAndReschedule(GcsLease lease, int chain, long dueNanos) {
        try {
            refresh(lease);
        } catch (RuntimeException e) {
            log.error("unexpected error refreshing lock '{}'", lease.name(), e);
        } finally {
            if (lease.refreshChain() == chain) { // a renewal started a new chain meanwhile: this one ends
                // Fixed rate: one interval after this refresh was *due*, not after its reply came, so the
                // period stays the interval whatever the reply time. A refresh that outlasted a whole interval
                // is followed at once (never two of one lease in flight; missed periods are not caught up).
                scheduleRefresh(lease, Math.max(dueNanos + lease.refreshInterval().toNanos(), engine.nanoTime()));
            }
        }
    }

    /** One refresh: one PATCH on success; a GET more only after a 412. */
    Refresh refresh(GcsLease lease) {
        lease.lockIo();
        try {
            if (lease.state() != GcsLease.State.ACTIVE || lease.isReleasing() || !awaitWriteWindow(lease)) {
                return Refresh.FAILED;
            }
            long knownMetageneration = lease.metageneration();
            long sent = engine.nanoTime();
            // Every refresh writes the lease's TTL: others judge staleness by the TTL in the object, and a
            // renewal (a new TTL) reaches the object with the next confirmed refresh.
            LeaseTiming sending = lease.target();
            Instant expires = engine.estimatedGcsNow().plus(sending.ttl());
            // DESIGN.md rule 7: ifGenerationMatch as well as ifMetagenerationMatch (see LockStore#patch).
            // A fresh refresh id lets a lost-reply adoption tell our own PATCH from anyone else's.
            String refreshId = runtime.randomId(6);
            BlobInfo change = BlobInfo.newBuilder(lease.blobId())
                    .setMetadata(Map.of(LockObject.EXPIRES, expires.toString(), LockObject.REFRESH, refreshId,
                            LockObject.TTL, Long.toString(sending.ttl().toMillis())))
                    .build();
            if (lease.sending(sending, sent)) {
                // A shorter TTL goes out: once this PATCH commits, others judge the object by it, perhaps
                // before its reply reaches us (or never). The deadline timer must fire by the capped deadline,
                // not the old one, or the lost callback would come after a takeover (DESIGN.md rule 11).
                rearmDeadline(lease);
            }
            // Remembered until a refresh is confirmed: if this one times out but commits, the next refresh
            // meets 412 and must recognise the change as ours (a slow reply that still committed).
            lease.unconfirmedRefreshes().sent(refreshId, knownMetageneration, sent);
            Blob after;
            lease.wrote(sent); // rule 21: the window counts from the send, whatever comes back ...
            try {
                after = engine.storeFor(shorterOf(sending, lease.timing())).patch(change, lease.fencingToken(), knownMetageneration);
            } catch (StorageException e) {
                lease.wrote(engine.nanoTime()); // ... and from the end of the call: it may have committed until now
                return onRefreshError(lease, e, refreshId, sending);
            } catch (RuntimeException e) {
                lease.wrote(engine.nanoTime());
                countFailure(lease, e);
                return Refresh.FAILED;
            }
            lease.wrote(engine.nanoTime());
            if (!engine.isOurs(after, lease.leaseId())) {
                // Cannot happen with both preconditions, but the reply is the authority.
                lease.markLost("lock object now belongs to " + LockObject.owner(after));
                return Refresh.FAILED;
            }
            // Rule 11: the deadline timer runs on its own thread and may declare the loss at any moment up to here
            // (this PATCH hung, or its reply came just before the deadline): the check and the confirmation are one step.
            runtime.yieldPoint("refresh of '" + lease.name() + "': reply in");
            if (!lease.confirmRefresh(after.getMetageneration(), sent, LockObject.updated(after), sending)) {
                return Refresh.FAILED; // lost meanwhile: LOST is final
            }
            return Refresh.OWN;
        } finally {
            lease.unlockIo();
        }
    }

    /** Whether the error turned out to be a committed refresh of ours, adopted as confirmed (this one: OWN). */
    private Refresh onRefreshError(GcsLease lease, StorageException e, String refreshId, LeaseTiming sending) {
        if (e.getCode() == 404) {
            lease.markLost("lock object was deleted (by an administrator, or taken over after this holder stalled)");
            return Refresh.FAILED;
        }
        if (e.getCode() == 412) {
            // Our own write may have moved the metageneration: the client retried a PATCH whose reply was
            // lost, or an earlier refresh timed out but still committed. Adopt it only if the object is
            // still ours and carries the id of one of our unconfirmed refreshes, exactly one write past
            // the metageneration that refresh was guarded by (someone else's PATCH would not be).
            Blob current;
            try {
                current = engine.storeFor(lease.timing()).read(lease.blobId());
            } catch (StorageException again) {
                countFailure(lease, again);
                return Refresh.FAILED;
            }
            // A loss declared while these requests hung (the deadline passed) is final: the markLost calls below do
            // nothing then, and confirmRefresh refuses to confirm.
            if (current == null) {
                lease.markLost("lock object was deleted");
            } else if (current.getGeneration() == lease.fencingToken()
                    && engine.isOurs(current, lease.leaseId())
                    && lease.unconfirmedRefreshes().thatWrote(current) != null) {
                UnconfirmedRefreshes.Refresh ours = lease.unconfirmedRefreshes().thatWrote(current);
                boolean own = refreshId.equals(LockObject.meta(current, LockObject.REFRESH));
                // Dated from that refresh's send: the object's updated is no earlier. If this very refresh committed,
                // its TTL is the object's. Checked against a loss declared meanwhile in the same step (rule 11).
                runtime.yieldPoint("refresh of '" + lease.name() + "': reply in");
                if (!lease.confirmRefresh(current.getMetageneration(), ours.sentNanos(), LockObject.updated(current),
                        own ? sending : null)) {
                    return Refresh.FAILED; // lost meanwhile: LOST is final
                }
                log.debug("lock '{}': adopted our own refresh whose reply was lost or came too late", lease.name());
                return own ? Refresh.OWN : Refresh.ADOPTED_EARLIER;
            } else {
                lease.markLost("lock object was changed by someone else: now held by " + LockObject.owner(current)
                        + " with fencing token " + current.getGeneration());
            }
            return Refresh.FAILED;
        }
        countFailure(lease, e);
        return Refresh.FAILED;
    }

    private void countFailure(GcsLease lease, Exception e) {
        if (lease.state() == GcsLease.State.RELEASED) {
            // Released while this refresh's request was in flight: only on this very thread (a release elsewhere waits
            // for the I/O lock this refresh holds) -- close() called by the application's transport inside the PATCH
            // released it. Its "released" is told already: no refreshFailed after it (rule 20).
            log.debug("refresh of lock '{}' ended after the lease was released on its own thread: {}", lease.name(), e.toString());
            return;
        }
        if (Thread.currentThread().isInterrupted()) {
            // The caller's own interrupt broke the call (a cancelled task renewing: the client's retry backoff after
            // a 429 or a 503 ends at once): that says nothing about GCS, so it does not count towards rule 10's
            // consecutive failures — three such renewals lost a healthy lease. The deadline (rule 11) still bounds it.
            log.debug("refresh of lock '{}' broken by an interrupt of the calling thread; not counted as a failure: {}",
                    lease.name(), e.toString());
            engine.listeners().refreshFailed(lease, e);
            return;
        }
        int failures = lease.refreshFailed();
        engine.listeners().refreshFailed(lease, e);
        if (failures >= maxFailures) {
            lease.markLost(failures + " consecutive refreshes failed; last error: " + e.getMessage());
        } else {
            log.warn("refresh of lock '{}' failed ({} of {} allowed): {}", lease.name(), failures,
                    maxFailures, Objects.toString(e.getMessage(), e.toString()));
        }
    }

    @Override
    public void close() {
        close(Duration.ZERO);
    }

    /**
     * Stops refreshing. Tasks already running — a release whose DELETE is in flight (a hold-at-least
     * release that came due), a refresh — may finish for up to {@code awaitRunning}; tasks not yet due are
     * dropped. DESIGN.md rule 14: a running release is not interrupted — rule 12 sees an interrupted release through, but
     * an interrupt may break a call that is then sent again, past the bound close() waits (which then waits for every
     * release in flight, the refresher's included).
     */
    void close(Duration awaitRunning) {
        close(awaitRunning, false);
    }

    /**
     * As {@link #close(Duration)}; if {@code runningTasksMayWaitForThisThread} (the closing thread holds a lease's I/O
     * lock: the application's transport inside a renewal's PATCH), the running tasks are neither waited for nor
     * interrupted: a refresh of that lease, or its hold-at-least release, waits for that lock and cannot end while close()
     * waits — close() sat out its whole bound (rule 14). They end on their own once the lock is let go.
     */
    void close(Duration awaitRunning, boolean runningTasksMayWaitForThisThread) {
        timer.shutdownNow(); // refreshes and delayed releases not yet due are dropped
        refreshers.shutdown();
        boolean leaveRunningTasks = runningTasksMayWaitForThisThread || onOwnRefresherThread();
        boolean interrupted = false;
        try {
            long end = runtime.nanoTime() + awaitRunning.toNanos(); // the runtime's time, as the wait's (a test's virtual time)
            // an interrupted closing thread waits all the same (the flag is given back): returning early would
            // shutdownNow() (interrupt) a release in flight on the refresher (rule 14)
            while (!awaitRunning.isZero() && !leaveRunningTasks) {
                try {
                    if (!refreshers.awaitTermination(Math.max(0, end - runtime.nanoTime()), TimeUnit.NANOSECONDS)) {
                        log.warn("gave up waiting {} for lock releases in progress at close", awaitRunning);
                    }
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (!leaveRunningTasks) {
                refreshers.shutdownNow();
            }
            // else: close() runs on one of this refresher's threads (the application's transport inside a refresh, or
            // inside a hold-at-least release), or holds a lock its running tasks may wait for: it cannot wait for them,
            // and must not interrupt them either (rule 14) -- they end on their own; close() then waits for the releases
            // in flight among them that can end.
            deadlines.shutdownNow();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether the current thread is one of this keeper's refresher threads (not another registry's, not the timer). */
    private boolean onOwnRefresherThread() {
        return refresherOf.get() == this;
    }
}
