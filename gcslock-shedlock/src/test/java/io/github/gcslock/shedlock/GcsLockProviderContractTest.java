package io.github.gcslock.shedlock;

import com.google.cloud.storage.BlobId;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.test.GcsEmulatorExtension;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * ShedLock's documented provider contract (a {@code LockProvider} and an {@code ExtensibleLockProvider}),
 * written from its documentation, against the emulator with the real GCS client. "Another instance" is a
 * second registry + provider, as a second JVM would have.
 */
class GcsLockProviderContractTest {

    static final String BUCKET = "shedlock";
    static final String NAME = "report-job";

    @RegisterExtension
    static final GcsEmulatorExtension gcs = new GcsEmulatorExtension(BUCKET);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private GcsLockRegistry registry;
    private GcsLockProvider provider;
    private GcsLockProvider otherInstance;

    @BeforeEach
    void setUp() {
        registry = newRegistry();
        provider = track(new GcsLockProvider(registry));
        otherInstance = track(new GcsLockProvider(newRegistry()));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private GcsLockRegistry newRegistry() {
        return track(GcsLockRegistry.builder(gcs.storage(), BUCKET)
                .ttl(Duration.ofSeconds(2))
                .refreshInterval(Duration.ofMillis(300))
                .operationTimeout(Duration.ofMillis(600))
                .writeRateWindow(Duration.ofMillis(20))
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0)
                .build());
    }

    private <T extends AutoCloseable> T track(T c) {
        closeables.add(c);
        return c;
    }

    static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    static LockConfiguration config(String name) {
        return config(name, Duration.ofMinutes(5), Duration.ZERO);
    }

    private boolean lockObjectExists(String name) {
        return gcs.storage().get(BlobId.of(BUCKET, "gcslock/" + name)) != null;
    }

    private void assertLocked(String name) {
        assertThat(lockObjectExists(name)).as("lock object of '%s' exists", name).isTrue();
    }

    private void assertUnlocked(String name) {
        assertThat(lockObjectExists(name)).as("lock object of '%s' exists", name).isFalse();
    }

    // ------------------------------------------------------------------ LockProvider contract

    @Test
    void lockCreatesTheLockObjectAndUnlockDeletesIt() {
        Optional<SimpleLock> lock = provider.lock(config(NAME));
        assertThat(lock).isPresent();
        assertLocked(NAME);
        lock.get().unlock();
        assertUnlocked(NAME);
    }

    @Test
    void aHeldNameIsNotLockedAgainOnTheSameThreadAnotherThreadOrAnotherInstance() throws Exception {
        Optional<SimpleLock> lock = provider.lock(config(NAME));
        assertThat(lock).isPresent();

        assertThat(provider.lock(config(NAME))).as("same thread: ShedLock locks are not reentrant").isEmpty();
        assertThat(CompletableFuture.supplyAsync(() -> provider.lock(config(NAME))).get()).as("another thread").isEmpty();
        assertThat(otherInstance.lock(config(NAME))).as("another instance").isEmpty();

        lock.get().unlock();
        assertUnlocked(NAME);
        Optional<SimpleLock> again = otherInstance.lock(config(NAME));
        assertThat(again).isPresent();
        again.get().unlock();
    }

    @Test
    void theEngineHoldOfTheCallingThreadDoesNotMakeALockReentrant() throws Exception {
        // The engine is reentrant per thread (a @GcsLocked method holds the name): ShedLock's lock() of the
        // same name on that thread must still return empty, and must not disturb the engine's hold count.
        Lease outer = registry.acquire(NAME, Duration.ofSeconds(1));
        assertThat(provider.lock(config(NAME))).isEmpty();
        assertLocked(NAME);
        outer.release();
        assertUnlocked(NAME);
    }

    @Test
    void aLockOfTheProviderIsAnInvocationsHoldThatTheSameThreadDoesNotEnterThroughTheEngine() {
        // Issue 20: under thread ownership the engine granted this thread a nested hold inside the ShedLock task's
        // lock (a @GcsLocked method of the same name ran inside it), and that nested hold kept the lease alive
        // past the task's unlock.
        Optional<SimpleLock> lock = provider.lock(config(NAME));
        assertThat(lock).isPresent();
        assertThat(registry.tryAcquire(NAME)).as("the engine, same thread, while the ShedLock lock is held").isEmpty();
        lock.get().unlock();
        assertUnlocked(NAME);
    }

    @Test
    void twoNamesAreIndependent() {
        Optional<SimpleLock> a = provider.lock(config(NAME));
        Optional<SimpleLock> b = provider.lock(config("other-job"));
        assertThat(a).isPresent();
        assertThat(b).isPresent();
        a.get().unlock();
        assertLocked("other-job");
        b.get().unlock();
        assertUnlocked("other-job");
    }

    @Test
    void canLockRightAfterUnlockManyTimes() {
        for (int i = 0; i < 10; i++) {
            Optional<SimpleLock> lock = provider.lock(config(NAME));
            assertThat(lock).as("round %d", i).isPresent();
            assertThat(provider.lock(config(NAME))).isEmpty();
            assertThat(otherInstance.lock(config(NAME))).isEmpty();
            lock.get().unlock();
        }
    }

    @Test
    void lockAtMostForEndsTheHoldEvenWhileTheHolderIsAlive() {
        Optional<SimpleLock> lock = provider.lock(config(NAME, Duration.ofMillis(300), Duration.ZERO));
        assertThat(lock).isPresent();
        assertLocked(NAME);
        // The holder is alive and refreshing; the provider releases the lock at lockAtMostFor all the same.
        await("lockAtMostFor (300 ms) to end the hold while the holder is alive")
                .atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertUnlocked(NAME));
        Optional<SimpleLock> next = otherInstance.lock(config(NAME));
        assertThat(next).isPresent();
        lock.get().unlock(); // the late unlock of the expired lock must not touch the new holder's lock
        assertLocked(NAME);
        next.get().unlock();
    }

    @Test
    void lockAtLeastForKeepsTheLockAfterUnlockUntilItHasPassed() {
        Duration atLeast = Duration.ofMillis(1500);
        Instant start = ClockProvider.now();
        Optional<SimpleLock> lock = provider.lock(new LockConfiguration(start, NAME, Duration.ofMinutes(1), atLeast));
        assertThat(lock).isPresent();
        lock.get().unlock();

        assertLocked(NAME);
        assertThat(otherInstance.lock(config(NAME))).as("another instance during lockAtLeastFor").isEmpty();
        assertThat(provider.lock(config(NAME))).as("this instance during lockAtLeastFor").isEmpty();

        await("the lock to be released when lockAtLeastFor has passed")
                .atMost(Duration.ofSeconds(30)).until(() -> !lockObjectExists(NAME));
        assertThat(ClockProvider.now()).as("never released before lockAtLeastUntil").isAfterOrEqualTo(start.plus(atLeast));
        Optional<SimpleLock> after = otherInstance.lock(config(NAME));
        assertThat(after).isPresent();
        after.get().unlock();
    }

    @Test
    void lockAtLeastForHasNoEffectOnceItHasPassed() {
        Instant longAgo = ClockProvider.now().minusSeconds(10);
        Optional<SimpleLock> lock = provider.lock(new LockConfiguration(longAgo, NAME, Duration.ofMinutes(1), Duration.ofSeconds(1)));
        assertThat(lock).isPresent();
        lock.get().unlock();
        assertUnlocked(NAME);
    }

    @Test
    void mutualExclusionUnderContentionAcrossInstances() throws Exception {
        GcsLockProvider[] providers = {provider, otherInstance};
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean overlap = new AtomicBoolean();
        AtomicInteger runs = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                GcsLockProvider p = providers[t % 2];
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < 15; i++) {
                        Optional<SimpleLock> lock = p.lock(config(NAME, Duration.ofSeconds(30), Duration.ZERO));
                        if (lock.isPresent()) {
                            if (inside.incrementAndGet() != 1) {
                                overlap.set(true);
                            }
                            runs.incrementAndGet();
                            sleepMillis(5);
                            inside.decrementAndGet();
                            lock.get().unlock();
                        }
                        sleepMillis(3);
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlap).as("two holders at once").isFalse();
        assertThat(runs.get()).isPositive();
        assertUnlocked(NAME);
    }

    @Test
    void worksUnderShedLocksTaskExecutor() throws Throwable {
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        AtomicBoolean ran = new AtomicBoolean();
        executor.executeWithLock((Runnable) () -> {
            LockAssert.assertLocked();
            assertLocked(NAME);
            // ShedLock's executor refuses nested runs of a held name itself; the provider must agree from
            // another thread as well.
            assertThat(CompletableFuture.supplyAsync(() -> provider.lock(config(NAME))).join()).isEmpty();
            ran.set(true);
        }, config(NAME));
        assertThat(ran).isTrue();
        assertUnlocked(NAME);
    }

    @Test
    void gcsErrorsSurfaceAsLockException() {
        gcs.faults().failNext(50, 503);
        assertThatThrownBy(() -> provider.lock(config(NAME))).isInstanceOf(LockException.class)
                .hasMessageContaining(NAME);
        gcs.faults().reset();
        Optional<SimpleLock> lock = provider.lock(config(NAME));
        assertThat(lock).as("a failed attempt leaves nothing held").isPresent();
        lock.get().unlock();
    }

    @Test
    void anInvalidNameIsRejectedNamingIt() {
        assertThatThrownBy(() -> provider.lock(config("bad\nname"))).isInstanceOf(LockException.class)
                .hasMessageContaining("bad");
    }

    @Test
    void closeReleasesTheLocksStillHeld() {
        assertThat(provider.lock(config(NAME))).isPresent();
        provider.close();
        assertUnlocked(NAME);
        assertThatThrownBy(() -> provider.lock(config(NAME))).isInstanceOf(IllegalStateException.class);
    }

    // ------------------------------------------------------------------ a crashed holder

    private long storedTtlMillis(String name) {
        return Long.parseLong(gcs.storage().get(BlobId.of(BUCKET, "gcslock/" + name)).getMetadata().get("gcslock-ttl"));
    }

    @Test
    void eachLockIsTakenWithTheShorterOfLockAtMostForAndTheRegistrysTtl() {
        SimpleLock shortLock = provider.lock(config(NAME, Duration.ofMillis(1500), Duration.ZERO)).orElseThrow();
        assertThat(storedTtlMillis(NAME)).isEqualTo(1500);
        shortLock.unlock();
        SimpleLock longLock = provider.lock(config(NAME, Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
        assertThat(storedTtlMillis(NAME)).as("the registry's TTL").isEqualTo(2000);
        SimpleLock shortened = longLock.extend(Duration.ofMillis(1200), Duration.ZERO).orElseThrow();
        assertThat(storedTtlMillis(NAME)).as("an extension to a shorter lockAtMostFor shortens the TTL").isEqualTo(1200);
        shortened.unlock();
        // (A 50 ms lock is gone again before it could be read; the rule itself:)
        assertThat(provider.ttlFor(config(NAME, Duration.ofMillis(50), Duration.ZERO))).as("never under the minimum")
                .isEqualTo(Duration.ofMillis(GcsLockProvider.MINIMUM_TTL_MILLIS));
    }

    @Test
    void aCrashedHolderFreesTheLockAfterItsLockAtMostForNotAfterTheRegistrysTtl() {
        // Both instances use a 30 s TTL; the lock is taken for at most 1.5 s. The emulator here has no write limit, so the
        // registries use a 20 ms write window as the rest of this class does (with GCS's 1 s window rule 21 refuses 1.5 s).
        Duration longTtl = Duration.ofSeconds(30);
        java.util.concurrent.ScheduledThreadPoolExecutor holderTimer = new java.util.concurrent.ScheduledThreadPoolExecutor(1);
        GcsLockProvider holder = track(new GcsLockProvider(track(GcsLockRegistry.builder(gcs.storage(), BUCKET).ttl(longTtl)
                .refreshInterval(Duration.ofSeconds(3)).operationTimeout(Duration.ofMillis(600))
                .writeRateWindow(Duration.ofMillis(20)).build()), holderTimer));
        GcsLockProvider other = track(new GcsLockProvider(track(GcsLockRegistry.builder(gcs.storage(), BUCKET).ttl(longTtl)
                .refreshInterval(Duration.ofSeconds(3)).operationTimeout(Duration.ofMillis(600))
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0).writeRateWindow(Duration.ofMillis(20)).build())));
        assertThat(holder.lock(config(NAME, Duration.ofMillis(1500), Duration.ZERO))).isPresent();

        // The holder crashes: nothing releases the lock at lockAtMostFor and its refreshes stop reaching GCS.
        holderTimer.shutdownNow();
        gcs.faults().failNext(1_000_000, 503, io.github.gcslock.test.Operation.PATCH);
        assertThat(other.lock(config(NAME))).isEmpty();

        await("the other instance to take over the crashed holder's lock, at its 1.5 s lockAtMostFor")
                .atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            Optional<SimpleLock> taken = other.lock(config(NAME));
            assertThat(taken).as("taken over long before the registries' 30 s TTL").isPresent();
            taken.get().unlock();
        });
        gcs.faults().reset();
    }

    // ------------------------------------------------------------------ ExtensibleLockProvider contract

    @Test
    void anExtendedLockOutlivesItsOriginalLockAtMostFor() {
        Optional<SimpleLock> lock = provider.lock(config(NAME, Duration.ofMillis(500), Duration.ZERO));
        assertThat(lock).isPresent();
        Optional<SimpleLock> extended = lock.get().extend(Duration.ofSeconds(30), Duration.ZERO);
        assertThat(extended).isPresent();

        sleepMillis(900); // well past the original lockAtMostFor
        assertLocked(NAME);
        assertThat(otherInstance.lock(config(NAME))).isEmpty();

        extended.get().unlock();
        assertUnlocked(NAME);
    }

    @Test
    void anExtendedLockStillEndsAtItsNewLockAtMostFor() {
        Optional<SimpleLock> lock = provider.lock(config(NAME, Duration.ofSeconds(30), Duration.ZERO));
        Optional<SimpleLock> extended = lock.orElseThrow().extend(Duration.ofMillis(300), Duration.ZERO);
        assertThat(extended).isPresent();
        await("the extended lock to end at its new lockAtMostFor (300 ms), not the first one (30 s)")
                .atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertUnlocked(NAME));
    }

    @Test
    void anUnlockedLockCannotBeExtended() {
        SimpleLock lock = provider.lock(config(NAME)).orElseThrow();
        lock.unlock();
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertUnlocked(NAME);
    }

    @Test
    void anExpiredLockCannotBeExtended() {
        SimpleLock lock = provider.lock(config(NAME, Duration.ofMillis(1), Duration.ZERO)).orElseThrow();
        await("the lock to end at its 1 ms lockAtMostFor")
                .atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertUnlocked(NAME));
        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        assertUnlocked(NAME);
    }

    @Test
    void extendingCanSetALockAtLeastFor() {
        SimpleLock lock = provider.lock(config(NAME, Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)).orElseThrow();
        extended.unlock();
        assertLocked(NAME);
        assertThat(otherInstance.lock(config(NAME))).isEmpty();
    }

    @Test
    void aLockCanBeExtendedOnlyOnceAndNotUnlockedAfterwards() {
        SimpleLock lock = provider.lock(config(NAME, Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
        assertLocked(NAME);
        extended.unlock();
        assertUnlocked(NAME);
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
