package io.github.gcslock.autoconfigure;

import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code gcsLock} health: UP with the locks this instance holds; DOWN while any of them is lost (its
 * work must stop), naming it and why. Makes no GCS request: it reads the leases' local state.
 */
public class GcsLockHealthIndicator extends AbstractHealthIndicator {

    private final LockRegistry registry;

    public GcsLockHealthIndicator(LockRegistry registry) {
        super("gcslock health check failed");
        this.registry = registry;
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
        if (lost.isEmpty()) {
            builder.up();
        } else {
            builder.down().withDetail("lost", lost);
        }
    }
}
