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
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Keeps held leases alive: every refresh interval it PATCHes each lock object's metadata (which bumps
 * {@code updated}, the timestamp others judge staleness by), on one small shared scheduler — never a
 * thread per lock — and adopts a refresh of ours whose reply was lost (rule 7). It also arms a deadline per
 * lease that declares the lease lost when no refresh has been confirmed for {@code ttl - safetyMargin},
 * before anyone else may take the lock over (rule 11), and runs delayed releases on its scheduler.
 */
final class LeaseKeeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

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

        Listeners listeners();
    }

    private final Engine engine;
    private final Duration interval;
    private final int maxFailures;
    private final ScheduledThreadPoolExecutor scheduler;
    /**
     * Declares leases LOST at their deadline. Its own thread, which never does I/O nor waits for a lock
     * an I/O call holds: a refresh hanging for the whole operation timeout on every refresher thread
     * must not delay any lease's LOST transition past its deadline (rule 11).
     */
    private final ScheduledThreadPoolExecutor deadlines;

    /** Time between refreshes of one lease. */
    Duration interval() {
        return interval;
    }

    LeaseKeeper(Engine engine, Duration interval, int maxFailures, int threads) {
        this.engine = engine;
        this.interval = interval;
        this.maxFailures = maxFailures;
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(LockEventDispatcher.engineThread(r), "gcslock-refresh-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.scheduler = new ScheduledThreadPoolExecutor(threads, tf);
        this.scheduler.setRemoveOnCancelPolicy(true);
        ThreadFactory deadlineThreads = r -> {
            Thread t = new Thread(LockEventDispatcher.engineThread(r), "gcslock-deadline");
            t.setDaemon(true);
            return t;
        };
        this.deadlines = new ScheduledThreadPoolExecutor(1, deadlineThreads);
        this.deadlines.setRemoveOnCancelPolicy(true);
    }

    void start(GcsLease lease) {
        scheduleRefresh(lease, lease.refreshInterval());
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
            scheduleRefresh(lease, lease.refreshInterval());
            rearmDeadline(lease); // a shorter TTL may have moved the deadline closer
        }
        return confirmed;
    }

    /** The timing with the shorter TTL: its calls must fit the tighter deadline (rule 15). */
    private static LeaseTiming shorterOf(LeaseTiming a, LeaseTiming b) {
        return a.ttl().compareTo(b.ttl()) <= 0 ? a : b;
    }

    private void rearmDeadline(GcsLease lease) {
        lease.cancelDeadline();
        armDeadline(lease);
    }

    /** Runs {@code task} after {@code delay} on the shared scheduler (used for deferred releases). */
    void schedule(Runnable task, Duration delay) {
        scheduler.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    void stop(GcsLease lease) {
        lease.cancelRefresh();
        lease.cancelDeadline();
    }

    int threadCount() {
        return scheduler.getPoolSize();
    }

    private void scheduleRefresh(GcsLease lease, Duration delay) {
        if (lease.state() != GcsLease.State.ACTIVE || lease.isReleasing() || scheduler.isShutdown()) {
            return;
        }
        int chain = lease.refreshChain();
        lease.refreshScheduled(scheduler.schedule(() -> refreshAndReschedule(lease, chain), delay.toNanos(), TimeUnit.NANOSECONDS));
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

    private void refreshAndReschedule(GcsLease lease, int chain) {
        try {
            refresh(lease);
        } catch (RuntimeException e) {
            log.error("unexpected error refreshing lock '{}'", lease.name(), e);
        } finally {
            if (lease.refreshChain() == chain) { // a renewal started a new chain meanwhile: this one ends
                scheduleRefresh(lease, lease.refreshInterval());
            }
        }
    }

    /** One refresh: one PATCH on success; a GET more only after a 412. */
    Refresh refresh(GcsLease lease) {
        lease.io.lock();
        try {
            if (lease.state() != GcsLease.State.ACTIVE || lease.isReleasing()) {
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
            String refreshId = ProcessIdentity.randomHex(6);
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
            try {
                after = engine.storeFor(shorterOf(sending, lease.timing())).patch(change, lease.fencingToken(), knownMetageneration);
            } catch (StorageException e) {
                return onRefreshError(lease, e, refreshId, sending);
            } catch (RuntimeException e) {
                countFailure(lease, e);
                return Refresh.FAILED;
            }
            if (lease.state() != GcsLease.State.ACTIVE) {
                return Refresh.FAILED; // declared lost while this PATCH hung (the deadline passed): LOST is final
            }
            if (!engine.isOurs(after, lease.leaseId())) {
                // Cannot happen with both preconditions, but the reply is the authority.
                lease.markLost("lock object now belongs to " + LockObject.owner(after));
                return Refresh.FAILED;
            }
            lease.confirmed(after.getMetageneration(), sent, LockObject.updated(after));
            lease.timingConfirmed(sending);
            engine.listeners().refreshed(lease);
            return Refresh.OWN;
        } finally {
            lease.io.unlock();
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
            if (current == null) {
                lease.markLost("lock object was deleted");
            } else if (current.getGeneration() == lease.fencingToken()
                    && engine.isOurs(current, lease.leaseId())
                    && lease.unconfirmedRefreshes().thatWrote(current) != null) {
                UnconfirmedRefreshes.Refresh ours = lease.unconfirmedRefreshes().thatWrote(current);
                log.debug("lock '{}': adopted our own refresh whose reply was lost or came too late", lease.name());
                // Dated from that refresh's send: the object's updated is no earlier.
                lease.confirmed(current.getMetageneration(), ours.sentNanos(), LockObject.updated(current));
                boolean own = refreshId.equals(LockObject.meta(current, LockObject.REFRESH));
                if (own) {
                    lease.timingConfirmed(sending); // this very refresh committed: its TTL is the object's
                }
                engine.listeners().refreshed(lease);
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
     * dropped. DESIGN.md rule 14: interrupting a running release (or returning while it runs on a daemon
     * thread, just before the JVM exits) would leave an object of ours until its TTL.
     */
    void close(Duration awaitRunning) {
        scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        scheduler.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        scheduler.shutdown();
        try {
            if (!awaitRunning.isZero() && !isRefresherThread()
                    && !scheduler.awaitTermination(awaitRunning.toNanos(), TimeUnit.NANOSECONDS)) {
                log.warn("gave up waiting {} for lock releases in progress at close", awaitRunning);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            scheduler.shutdownNow();
            deadlines.shutdownNow();
        }
    }

    private static boolean isRefresherThread() {
        return Thread.currentThread().getName().startsWith("gcslock-refresh-");
    }
}
