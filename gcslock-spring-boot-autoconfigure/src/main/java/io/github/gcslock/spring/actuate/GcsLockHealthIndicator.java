package io.github.gcslock.spring.actuate;

import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsReachability;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gcsLock} health: UP with the locks this instance holds; DOWN while any of them is lost (its
 * work must stop), naming it and why, and DOWN while this instance's GCS calls fail (the {@code gcs}
 * detail: since when, how many, the last error) until one gets an answer again. Makes no GCS request: it
 * reads local state. Keep it out of a Kubernetes liveness group: a restart does not bring GCS back.
 */
public class GcsLockHealthIndicator extends AbstractHealthIndicator {

    private final LockRegistry registry;
    private final GcsReachability reachability;

    /** Health of the leases of {@code registry}, without GCS reachability. */
    public GcsLockHealthIndicator(LockRegistry registry) {
        this(registry, null);
    }

    /**
     * @param reachability where failed GCS calls are recorded; while they fail the status is DOWN with the
     *                     {@code gcs} detail (last error, since when, how many), or null to leave GCS out
     */
    public GcsLockHealthIndicator(LockRegistry registry, GcsReachability reachability) {
        super("gcslock health check failed");
        this.registry = registry;
        this.reachability = reachability;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        List<Map<String, Object>> locks = new ArrayList<>();
        List<String> lost = new ArrayList<>();
        List<Lease> leases = new ArrayList<>(registry.heldLeases());
        leases.sort(Comparator.comparing(Lease::name));
        for (Lease lease : leases) {
            boolean healthy = lease.isHealthy();
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("name", lease.name());
            d.put("fencingToken", lease.fencingToken());
            d.put("acquiredAt", String.valueOf(lease.acquiredAt()));
            d.put("lastRefresh", String.valueOf(lease.lastRefreshAt()));
            d.put("expires", String.valueOf(lease.expiresAt()));
            d.put("healthy", healthy);
            // DOWN only for a lease that was lost (its work must stop). A lease whose release has begun
            // leaves heldLeases(), but one may be read here just as its release begins: unhealthy,
            // without a lost reason; that is a normal release, not an outage.
            if (!healthy && lease.lostReason().isPresent()) {
                String reason = lease.lostReason().get();
                d.put("lostReason", reason);
                lost.add(lease.name() + ": " + reason);
            }
            locks.add(d);
        }
        builder.withDetail("held", locks.size()).withDetail("locks", locks);
        Optional<GcsReachability.Outage> outage = reachability != null ? reachability.outage() : Optional.empty();
        if (reachability != null) {
            Map<String, Object> gcs = new LinkedHashMap<>();
            gcs.put("reachable", outage.isEmpty());
            outage.ifPresent(o -> {
                gcs.put("failingSince", String.valueOf(o.since()));
                gcs.put("failures", o.failures());
                gcs.put("lastError", o.lastError());
                gcs.put("lastErrorAt", String.valueOf(o.lastErrorAt()));
            });
            builder.withDetail("gcs", gcs);
        }
        if (!lost.isEmpty()) {
            builder.down().withDetail("lost", lost);
        } else if (outage.isPresent()) {
            builder.down();
        } else {
            builder.up();
        }
    }
}
