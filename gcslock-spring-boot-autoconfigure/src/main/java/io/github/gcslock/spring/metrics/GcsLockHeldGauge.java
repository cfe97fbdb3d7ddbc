package io.github.gcslock.spring.metrics;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.LockRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.function.Supplier;

/**
 * The {@code gcslock.held} gauge: leases held by this instance ({@link LockRegistry#heldLeases()}), 0 while
 * there is no registry; and the {@code gcslock.refresh.rate} gauge: GCS object writes per second this instance's
 * held leases need to stay alive ({@link GcsLockRegistry#refreshRate()}), to be summed over instances and
 * compared with a bucket's write budget (about 1,000 per second at first; README "Scale"). Lock names are not
 * tags (per-tenant names would explode cardinality).
 */
public class GcsLockHeldGauge implements MeterBinder {

    private final Supplier<LockRegistry> registry;

    /**
     * @param registry the registry to read on each sample, or null while there is none (e.g. an
     *                 {@code ObjectProvider::getIfAvailable}, so that binding does not create the registry)
     */
    public GcsLockHeldGauge(Supplier<LockRegistry> registry) {
        this.registry = registry;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        Gauge.builder("gcslock.held", registry, r -> {
            LockRegistry locks = r.get();
            return locks == null ? 0 : locks.heldLeases().size();
        }).description("Locks held by this instance").register(meters);
        Gauge.builder("gcslock.refresh.rate", registry, r -> r.get() instanceof GcsLockRegistry gcs ? gcs.refreshRate() : 0)
                .description("GCS object writes per second that this instance's held locks need (one refresh per lock per refresh interval)")
                .baseUnit("writes/s").register(meters);
    }
}
