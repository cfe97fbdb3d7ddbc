package io.github.gcslock.spring;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Spring Integration's registry contract (as its JDBC and Redis registries keep it) on GCS locks, against the
 * emulator with the real client. "Another instance" is a second engine registry on the same bucket.
 */
class GcsIntegrationLockRegistryTest {

    private final String bucket = SharedEmulator.newBucket();
    private GcsLockRegistry engine;
    private GcsLockRegistry otherEngine;
    private GcsIntegrationLockRegistry registry;
    private GcsIntegrationLockRegistry otherInstance;

    @BeforeEach
    void setUp() {
        engine = SharedEmulator.otherInstance(bucket);
        otherEngine = SharedEmulator.otherInstance(bucket);
        registry = new GcsIntegrationLockRegistry(engine);
        otherInstance = new GcsIntegrationLockRegistry(otherEngine);
    }

    @AfterEach
    void tearDown() {
        SharedEmulator.GCS.faults().reset();
        engine.close();
        otherEngine.close();
    }

    private Blob object(String name) {
        return SharedEmulator.GCS.storage().get(BlobId.of(bucket, "gcslock/" + name));
    }

    private boolean inOtherThread(java.util.function.Supplier<Boolean> action) {
        return CompletableFuture.supplyAsync(action).join();
    }

    @Test
    void obtainGivesTheSameLockForTheSameKeyAndValidatesTheName() {
        DistributedLock a = registry.obtain("orders");
        assertThat(registry.obtain("orders")).isSameAs(a);
        assertThat(registry.obtain("invoices")).isNotSameAs(a);
        assertThatThrownBy(() -> registry.obtain("bad#key")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad#key");
    }

    @Test
    void lockAndUnlockTakeAndGiveBackTheGcsLock() throws Exception {
        DistributedLock lock = registry.obtain("orders");
        lock.lock();
        assertThat(object("orders")).isNotNull();
        assertThat(otherInstance.obtain("orders").tryLock()).isFalse();
        assertThat(inOtherThread(() -> registry.obtain("orders").tryLock())).as("another thread of this instance").isFalse();
        lock.unlock();
        assertThat(object("orders")).isNull();
        DistributedLock other = otherInstance.obtain("orders");
        assertThat(other.tryLock(1, TimeUnit.SECONDS)).isTrue();
        other.unlock();
    }

    @Test
    void theCacheIsBoundedAndNeverEvictsAHeldLock() {
        registry.setCacheCapacity(2);
        DistributedLock a = registry.obtain("a");
        a.lock();
        DistributedLock b = registry.obtain("b");
        registry.obtain("c"); // evicts b (unused), never a (held)
        assertThat(registry.obtain("a")).isSameAs(a);
        assertThat(registry.obtain("b")).isNotSameAs(b);
        DistributedLock b2 = registry.obtain("b");
        b2.lock();
        assertThatThrownBy(() -> registry.obtain("d")).as("every cached lock is held")
                .isInstanceOf(CannotAcquireLockException.class);
        b2.unlock();
        assertThat(registry.obtain("d")).isNotNull();
        a.unlock();
    }

    @Test
    void anEvictedLockObjectRefusesToBeLockedAsSpringIntegrationsRegistriesDo() {
        // JdbcLockRegistry and RedisLockRegistry refuse an orphaned lock: holding it, renewLock(key) could not find it.
        DistributedLock orphan = registry.obtain("orphan");
        registry.expireUnusedOlderThan(0);
        assertThatThrownBy(orphan::lock).isInstanceOf(org.springframework.dao.CannotAcquireLockException.class)
                .hasMessageContaining("'orphan'").hasMessageContaining("obtain(key) it again");
        assertThatThrownBy(orphan::tryLock).isInstanceOf(org.springframework.dao.CannotAcquireLockException.class);
        DistributedLock fresh = registry.obtain("orphan");
        fresh.lock();
        registry.renewLock("orphan"); // the lock obtain(key) returns is the one held: renewal finds it
        fresh.unlock();
    }

    @Test
    void expireUnusedOlderThanDropsIdleLocksButKeepsHeldOnes() {
        DistributedLock held = registry.obtain("held");
        DistributedLock idle = registry.obtain("idle");
        held.lock();
        registry.expireUnusedOlderThan(0);
        assertThat(registry.obtain("held")).isSameAs(held);
        assertThat(registry.obtain("idle")).isNotSameAs(idle);
        held.unlock();
    }

    @Test
    void nestedLocksByTheHoldingThreadCostNoGcsRequest() throws Exception {
        DistributedLock lock = registry.obtain("leader");
        lock.lock();
        long before = SharedEmulator.GCS.faults().objectRequests();
        for (int i = 0; i < 5; i++) {
            assertThat(lock.tryLock(500, TimeUnit.MILLISECONDS)).isTrue();
            lock.unlock();
        }
        assertThat(lock.tryLock()).isTrue();
        lock.lock();
        lock.unlock();
        lock.unlock();
        assertThat(SharedEmulator.GCS.faults().objectRequests() - before).isZero();
        assertThat(object("leader")).isNotNull();
        lock.unlock();
        assertThat(object("leader")).isNull();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItThrowsIllegalStateException() {
        DistributedLock lock = registry.obtain("orders");
        lock.lock();
        assertThatThrownBy(() -> CompletableFuture.runAsync(lock::unlock).join())
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThat(object("orders")).as("still held").isNotNull();
        lock.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void unlockOfALockLostMeanwhileThrowsConcurrentModificationException() {
        DistributedLock lock = registry.obtain("orders");
        lock.lock();
        SharedEmulator.GCS.storage().delete(BlobId.of(bucket, "gcslock/orders")); // an administrator deletes it
        await("the lease of 'orders' to be lost after its object was deleted")
                .atMost(Duration.ofSeconds(30)).until(() -> engine.heldLeases().stream().noneMatch(io.github.gcslock.Lease::isHealthy));
        DistributedLock theirs = otherInstance.obtain("orders");
        await("the other instance to take 'orders'")
                .pollInSameThread().atMost(Duration.ofSeconds(30)).until(theirs::tryLock);
        long theirToken = object("orders").getGeneration();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class).hasMessageContaining("orders");
        assertThat(object("orders").getGeneration()).as("the new holder's lock is untouched").isEqualTo(theirToken);
        assertThat(lock.tryLock()).as("this instance competes afresh").isFalse();
        theirs.unlock();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void aNestedTryLockThatFindsTheLockLostAnswersFalseAndTheNextOneCompetesAfresh() throws Exception {
        DistributedLock lock = registry.obtain("leader");
        assertThat(lock.tryLock()).isTrue();
        SharedEmulator.GCS.storage().delete(BlobId.of(bucket, "gcslock/leader"));
        // The refresh notices the deletion; a nested tryLock then says "not held" (no new lease quietly)...
        await("a nested tryLock to answer false after the lock object was deleted")
                .pollInSameThread().atMost(Duration.ofSeconds(30)).until(() -> !lock.tryLock(0, TimeUnit.MILLISECONDS));
        assertThat(object("leader")).isNull();
        // ... and the next call competes for it like anyone.
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        assertThat(object("leader")).isNotNull();
        lock.unlock();
        assertThat(object("leader")).isNull();
    }

    @Test
    void lockWithATtlStoresItInTheLockObject() throws Exception {
        DistributedLock lock = registry.obtain("ttl");
        lock.lock(Duration.ofSeconds(3));
        assertThat(object("ttl").getMetadata()).containsEntry("gcslock-ttl", "3000");
        lock.unlock();
        assertThat(lock.tryLock(Duration.ofMillis(100), Duration.ofMillis(1500))).isTrue();
        assertThat(object("ttl").getMetadata()).containsEntry("gcslock-ttl", "1500");
        lock.unlock();
        assertThatThrownBy(() -> lock.tryLock(Duration.ZERO, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl");
    }

    @Test
    void renewLockRefreshesNowAndMayChangeTheTtl() {
        DistributedLock lock = registry.obtain("renewed");
        lock.lock();
        long metageneration = object("renewed").getMetageneration();
        registry.renewLock("renewed");
        assertThat(object("renewed").getMetageneration()).isEqualTo(metageneration + 1);
        registry.renewLock("renewed", Duration.ofSeconds(4));
        assertThat(object("renewed").getMetadata()).containsEntry("gcslock-ttl", "4000");

        assertThatThrownBy(() -> CompletableFuture.runAsync(() -> registry.renewLock("renewed")).join())
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> registry.renewLock("never-obtained")).isInstanceOf(IllegalStateException.class);
        lock.unlock();
        assertThatThrownBy(() -> registry.renewLock("renewed")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void gcsFailuresWhileLockingThrowCannotAcquireLockException() {
        SharedEmulator.GCS.faults().failNext(1000, 503, Operation.INSERT);
        assertThatThrownBy(() -> registry.obtain("orders").tryLock()).isInstanceOf(CannotAcquireLockException.class)
                .hasMessageContaining("orders");
        assertThatThrownBy(() -> registry.obtain("orders").tryLock(300, TimeUnit.MILLISECONDS))
                .isInstanceOf(CannotAcquireLockException.class);
        SharedEmulator.GCS.faults().reset();
        DistributedLock lock = registry.obtain("orders");
        assertThat(lock.tryLock()).as("nothing stayed held").isTrue();
        lock.unlock();
    }

    @Test
    void executeLockedRunsUnderTheLock() throws Exception {
        String result = registry.executeLocked("task", () -> {
            assertThat(object("task")).isNotNull();
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(object("task")).isNull();
    }

    // ------------------------------------------------------------------ issue 20: the Lock contract kept

    @Test
    void aNestedLockAfterTheOuterHoldWasLostFailsAndTheOuterUnlockThrowsConcurrentModificationException() {
        DistributedLock lock = registry.obtain("lost-outer");
        lock.lock();
        SharedEmulator.GCS.storage().delete(BlobId.of(bucket, "gcslock/lost-outer")); // an administrator deletes it
        await("the lease of 'lost-outer' to be lost after its object was deleted")
                .atMost(Duration.ofSeconds(30)).until(() -> engine.heldLeases().stream().noneMatch(io.github.gcslock.Lease::isHealthy));
        // The rest of the outer section must not run under a fresh lease it never asked for.
        assertThatThrownBy(lock::lock).as("nested lock() after the outer hold was lost")
                .isInstanceOf(ConcurrentModificationException.class).hasMessageContaining("lost-outer");
        assertThat(object("lost-outer")).as("no fresh lease taken quietly").isNull();
        assertThatThrownBy(lock::unlock).as("the outer unlock()").isInstanceOf(ConcurrentModificationException.class);
        assertThat(lock.tryLock()).as("the next call competes afresh").isTrue();
        lock.unlock();
        assertThat(object("lost-outer")).isNull();
    }

    @Test
    void tryLockWithATimeOfZeroOrLessMakesOneAttempt() throws Exception {
        DistributedLock lock = registry.obtain("once");
        assertThat(lock.tryLock(-1, TimeUnit.MILLISECONDS)).as("free: taken").isTrue();
        lock.unlock();
        DistributedLock theirs = otherInstance.obtain("once");
        assertThat(theirs.tryLock()).isTrue();
        assertThat(lock.tryLock(-1, TimeUnit.MILLISECONDS)).as("held elsewhere").isFalse();
        assertThat(lock.tryLock(0, TimeUnit.MILLISECONDS)).isFalse();
        theirs.unlock();
    }

    @Test
    void expireUnusedOlderThanNeverEvictsALockAThreadIsWaitingFor() throws Exception {
        java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(1);
        GcsLockRegistry watched = GcsLockRegistry.builder(SharedEmulator.GCS.storage(), bucket).ttl(Duration.ofSeconds(2))
                .writeRateWindow(Duration.ofMillis(20)) // rule 21: a 2 s TTL fits 3 refreshes only with a short window
                .refreshInterval(Duration.ofMillis(300)).backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2)
                .listener(new io.github.gcslock.LockEventListener() {
                    @Override
                    public void acquireStarted(String name, io.github.gcslock.AcquireMode mode) {
                        waiting.countDown();
                    }
                }).build();
        try {
            GcsIntegrationLockRegistry mine = new GcsIntegrationLockRegistry(watched);
            DistributedLock theirs = otherInstance.obtain("awaited");
            theirs.lock();
            DistributedLock lock = mine.obtain("awaited");
            CompletableFuture<Boolean> holder = CompletableFuture.supplyAsync(() -> {
                lock.lock();
                try {
                    mine.renewLock("awaited"); // the holder renews by key, as LockRegistryLeaderInitiator's users do
                    return mine.obtain("awaited") == lock;
                } finally {
                    lock.unlock();
                }
            });
            assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
            mine.expireUnusedOlderThan(0); // while a thread waits in lock()
            theirs.unlock();
            assertThat(holder.get(20, TimeUnit.SECONDS)).as("obtain(key) gives the holder's lock").isTrue();
        } finally {
            watched.close();
        }
    }
}
