package io.github.gcslock.spring.metrics;

import io.github.gcslock.AcquireOutcome;
import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockInfo;
import io.github.gcslock.LockLostException;
import io.github.gcslock.spring.GcsLockedAcquireListener;
import io.github.gcslock.spring.IfLocked;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;

/**
 * Micrometer meters of the lock registry: {@code gcslock.acquire} (timer, tag {@code outcome}, see below),
 * {@code gcslock.refresh} (counter, tag {@code outcome} = success, failure), {@code gcslock.lost},
 * {@code gcslock.takeover}, {@code gcslock.fencing.regression} (an acquisition whose fencing token was not
 * greater than one seen before for the lock: alert on it). The {@code gcslock.held} gauge is {@link GcsLockHeldGauge}. Lock names are not tags:
 * per-tenant names would explode cardinality.
 *
 * <p>{@code gcslock.acquire} outcomes, one per acquisition (nested holds are not counted). For a
 * {@code @GcsLocked} call they follow its mode: {@code acquired}; {@code skipped} (SKIP: held elsewhere,
 * the method did not run, with or without maxWait); {@code refused} (FAIL: held elsewhere,
 * {@code LockNotAcquiredException}, with or without maxWait); {@code timeout} (WAIT: maxWait ran out);
 * {@code interrupted}; {@code error} (GCS could not be asked, or kept failing for the whole wait). For
 * direct {@code LockRegistry} calls: {@code acquired}; {@code busy} ({@code tryAcquire} found it held);
 * {@code timeout} ({@code acquire}'s wait ran out); {@code error}.
 */
public class GcsLockMetrics implements LockEventListener, GcsLockedAcquireListener {

    private final MeterRegistry registry;
    private final Counter refreshSuccess;
    private final Counter refreshFailure;
    private final Counter lost;
    private final Counter takeover;
    private final Counter fencingRegression;
    /**
     * Set on a thread while a {@code @GcsLocked} call acquires: the registry's report of that acquisition
     * (same thread, in between) is then not recorded with the registry's outcome but marked here, and the
     * interceptor's report records it once, with the mode's outcome. Left unmarked by a nested hold.
     */
    private final ThreadLocal<boolean[]> annotatedCall = new ThreadLocal<>();

    /** Registers the counters on {@code registry}; the {@code gcslock.acquire} timers are registered as outcomes occur. */
    public GcsLockMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.refreshSuccess = Counter.builder("gcslock.refresh").tag("outcome", "success")
                .description("Lease refreshes").register(registry);
        this.refreshFailure = Counter.builder("gcslock.refresh").tag("outcome", "failure")
                .description("Lease refreshes").register(registry);
        this.lost = Counter.builder("gcslock.lost").description("Leases lost while held").register(registry);
        this.takeover = Counter.builder("gcslock.takeover")
                .description("Stale lock objects removed to take the lock over").register(registry);
        this.fencingRegression = Counter.builder("gcslock.fencing.regression")
                .description("Acquisitions whose fencing token was not greater than one seen before for the lock")
                .register(registry);
    }

    @Override
    public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
        boolean[] call = annotatedCall.get();
        if (call != null) {
            call[0] = true; // a @GcsLocked call: recorded by acquireFinished(name, mode, ...) with the mode's outcome
            return;
        }
        record(outcome.label(), took);
    }

    @Override
    public void acquiring(String lockName) {
        annotatedCall.set(new boolean[1]);
    }

    @Override
    public void acquireFinished(String lockName, IfLocked mode, String outcome, Duration took) {
        boolean[] call = annotatedCall.get();
        annotatedCall.remove();
        if (call != null && call[0]) {
            record(outcome, took);
        }
    }

    private void record(String outcome, Duration took) {
        Timer.builder("gcslock.acquire").tag("outcome", outcome).description("Lock acquisitions")
                .register(registry).record(took);
    }

    @Override
    public void refreshed(Lease lease) {
        refreshSuccess.increment();
    }

    @Override
    public void refreshFailed(Lease lease, Exception error) {
        refreshFailure.increment();
    }

    @Override
    public void lost(Lease lease, LockLostException reason) {
        lost.increment();
    }

    @Override
    public void tookOver(String name, LockInfo staleHolder) {
        takeover.increment();
    }

    @Override
    public void fencingTokenRegression(Lease lease, long highestSeenBefore) {
        fencingRegression.increment();
    }
}
