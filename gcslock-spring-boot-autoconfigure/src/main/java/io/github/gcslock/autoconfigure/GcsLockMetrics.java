package io.github.gcslock.autoconfigure;

import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockInfo;
import io.github.gcslock.LockLostException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;

/**
 * Micrometer meters of the lock registry: {@code gcslock.acquire} (timer, tag {@code outcome} =
 * acquired, skipped, timeout, error), {@code gcslock.refresh} (counter, tag {@code outcome} = success,
 * failure), {@code gcslock.lost}, {@code gcslock.takeover}. The {@code gcslock.held} gauge is bound
 * separately. Lock names are not tags: per-tenant names would explode cardinality.
 */
public class GcsLockMetrics implements LockEventListener {

    private final MeterRegistry registry;
    private final Counter refreshSuccess;
    private final Counter refreshFailure;
    private final Counter lost;
    private final Counter takeover;

    public GcsLockMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.refreshSuccess = Counter.builder("gcslock.refresh").tag("outcome", "success")
                .description("Lease refreshes").register(registry);
        this.refreshFailure = Counter.builder("gcslock.refresh").tag("outcome", "failure")
                .description("Lease refreshes").register(registry);
        this.lost = Counter.builder("gcslock.lost").description("Leases lost while held").register(registry);
        this.takeover = Counter.builder("gcslock.takeover")
                .description("Stale lock objects removed to take the lock over").register(registry);
    }

    @Override
    public void acquireFinished(String name, String outcome, Duration took) {
        String tag = switch (outcome) {
            case "acquired" -> "acquired";
            case "busy" -> "skipped";
            case "timeout" -> "timeout";
            default -> "error";
        };
        Timer.builder("gcslock.acquire").tag("outcome", tag).description("Lock acquisition attempts")
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
}
