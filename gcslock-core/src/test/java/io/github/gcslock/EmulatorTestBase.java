package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** A fresh emulator and bucket per test; registries made here are closed after the test. */
abstract class EmulatorTestBase {

    static final String BUCKET = "locks";
    static final Duration TTL = Duration.ofMillis(1000);
    static final Duration REFRESH = Duration.ofMillis(200);

    GcsEmulator gcs;
    Storage storage;
    private final List<GcsLockRegistry> registries = new ArrayList<>();

    @BeforeEach
    void startEmulator() {
        gcs = GcsEmulator.start();
        gcs.createBucket(BUCKET);
        storage = gcs.storage();
    }

    @AfterEach
    void stopEmulator() {
        gcs.faults().reset();
        registries.forEach(GcsLockRegistry::close);
        gcs.close();
    }

    GcsLockRegistry registry() {
        return registry(b -> { });
    }

    /** A registry with short TTL and backoff, as tests need; {@code custom} may change anything. */
    GcsLockRegistry registry(Consumer<GcsLockRegistry.Builder> custom) {
        return registry(storage, custom);
    }

    /** As {@link #registry(Consumer)}, through {@code client} (one of the test's own, e.g. with a {@link HookedTransport}). */
    GcsLockRegistry registry(Storage client, Consumer<GcsLockRegistry.Builder> custom) {
        GcsLockRegistry.Builder b = GcsLockRegistry.builder(client, BUCKET)
                .ttl(TTL)
                .refreshInterval(REFRESH)
                .operationTimeout(Duration.ofMillis(500))
                .writeRateWindow(Duration.ofMillis(20)) // the tests' emulator scales GCS's 1 s write limit down
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0);
        custom.accept(b);
        GcsLockRegistry r = b.build();
        registries.add(r);
        return r;
    }

    Blob object(String name) {
        return storage.get(BlobId.of(BUCKET, "gcslock/" + name));
    }

    /** Plants a lock object as another (possibly dead) process would have written it. */
    Blob plantForeignLock(String name, Duration ttl) {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("gcslock-owner", "someone-else#dead");
        meta.put("gcslock-lease", "l-foreign");
        meta.put("gcslock-ttl", Long.toString(ttl.toMillis()));
        meta.put("gcslock-expires", Instant.now().plus(ttl).toString());
        return storage.create(BlobInfo.newBuilder(BUCKET, "gcslock/" + name).setMetadata(meta).build(), new byte[0],
                Storage.BlobTargetOption.doesNotExist());
    }

    /**
     * A foreign lock on {@code name} (TTL 300 ms) that {@code r} saw once, not yet provably stale then, and that is stale
     * by now (rule 6: judged from two sightings); {@code beforeOurDelete} runs just before the next DELETE, the
     * takeover's, is processed: what happens inside our read-delete window.
     */
    void staleForeignLockSeenBy(GcsLockRegistry r, String name, Runnable beforeOurDelete) {
        plantForeignLock(name, Duration.ofMillis(300));
        if (r.tryAcquire(name).isPresent()) {
            throw new AssertionError("a fresh foreign lock on '" + name + "' was taken at first sight");
        }
        sleep(450);
        gcs.faults().beforeNext(Operation.DELETE, beforeOurDelete);
    }

    /** What a live foreign holder's refresh does: bump the object's metadata. */
    Blob foreignRefresh(String name) {
        Blob b = object(name);
        return storage.update(BlobInfo.newBuilder(b.getBlobId()).setMetadata(Map.of("gcslock-expires", Instant.now().toString())).build(),
                Storage.BlobTargetOption.metagenerationMatch(b.getMetageneration()));
    }

    /** Another process holding names with a TTL long enough that it is never stale during a test (20 s). */
    GcsLockRegistry holder() {
        return registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2)));
    }

    /** Another process whose holds are never stale during a test and whose TTL / 4 puts a waiter's next look 7.5-15 s away (60 s). */
    GcsLockRegistry longHolder() {
        return registry(b -> b.ttl(Duration.ofSeconds(60)).refreshInterval(Duration.ofSeconds(2)));
    }

    /** Creates (INSERT requests) the emulator received since its counters were last reset. */
    long inserts() {
        return gcs.faults().requestCount(Operation.INSERT);
    }

    /** Reads (GET requests) the emulator received since its counters were last reset. */
    long reads() {
        return gcs.faults().requestCount(Operation.GET);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
