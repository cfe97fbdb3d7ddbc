package io.github.gcslock;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per lock name, the highest generation this process has seen (with its lease id), to detect a fencing
 * token that does not increase (rule 18): GCS documents generations as unique, not as increasing. Fed by
 * every lock object this process reads or creates. Bounded: the least recently used names are forgotten
 * (names may be per tenant).
 */
final class FencingRecord {

    private static final int MAX_REMEMBERED_GENERATIONS = 10_000;

    private record SeenGeneration(long generation, String leaseId) {
    }

    /** Guarded by itself. */
    private final Map<String, SeenGeneration> highestGenerationSeen = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, SeenGeneration> eldest) {
            return size() > MAX_REMEMBERED_GENERATIONS;
        }
    };

    /** {@code name} was seen with {@code generation} written for {@code leaseId} (kept if higher than before). */
    void seen(String name, long generation, String leaseId) {
        record(name, generation, leaseId);
    }

    /**
     * Records the fencing token of a lease just acquired; returns the higher (or equal) generation seen
     * before for its name when the token did not increase, else null. Equal is fine only for the very object
     * we read before adopting it (same lease id).
     */
    Long regressedFrom(Lease lease) {
        SeenGeneration before = record(lease.name(), lease.fencingToken(), lease.leaseId());
        if (before != null && (lease.fencingToken() < before.generation()
                || (lease.fencingToken() == before.generation() && !lease.leaseId().equals(before.leaseId())))) {
            return before.generation();
        }
        return null;
    }

    /** Remembers {@code generation} if higher than what was seen before; returns what was remembered before. */
    private SeenGeneration record(String name, long generation, String leaseId) {
        synchronized (highestGenerationSeen) {
            SeenGeneration before = highestGenerationSeen.get(name);
            if (before == null || generation > before.generation()) {
                highestGenerationSeen.put(name, new SeenGeneration(generation, leaseId));
            }
            return before;
        }
    }
}
