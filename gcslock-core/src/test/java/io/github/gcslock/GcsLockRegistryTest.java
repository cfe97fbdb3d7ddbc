package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The public API of the engine, against the emulator. */
class GcsLockRegistryTest extends EmulatorTestBase {

    @Test
    void uncontendedAcquireAndReleaseCostExactlyTwoRequests() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofMinutes(5)).refreshInterval(Duration.ofSeconds(37)));
        gcs.faults().resetCounters();
        Lease lease = r.acquire("job", Duration.ZERO);
        lease.release();
        assertThat(gcs.faults().objectRequests()).isEqualTo(2);
        assertThat(gcs.faults().requestCount(Operation.INSERT)).isEqualTo(1);
        assertThat(gcs.faults().requestCount(Operation.DELETE)).isEqualTo(1);
        assertThat(object("job")).isNull();
    }

    @Test
    void oneRefreshCostsOneRequestAndBumpsTheObject() {
        GcsLockRegistry r = registry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        Blob before = object("job");
        gcs.faults().resetCounters();
        await("the lease's first refresh PATCH")
                .atMost(Duration.ofSeconds(30)).until(() -> gcs.faults().requestCount(Operation.PATCH) >= 1);
        sleep(REFRESH.toMillis() / 4);
        long patches = gcs.faults().requestCount(Operation.PATCH);
        assertThat(gcs.faults().objectRequests()).isEqualTo(patches);
        Blob after = object("job");
        assertThat(after.getMetageneration()).isGreaterThan(before.getMetageneration());
        assertThat(after.getUpdateTimeOffsetDateTime()).isAfter(before.getUpdateTimeOffsetDateTime());
        assertThat(after.getGeneration()).isEqualTo(lease.fencingToken());
        assertThat(lease.isHealthy()).isTrue();
    }

    @Test
    void lockObjectCarriesHolderMetadata() {
        GcsLockRegistry r = registry(b -> b.applicationName("billing").identity("billing-1"));
        Lease lease = r.tryAcquire("report").orElseThrow();
        Blob b = object("report");
        assertThat(b.getCacheControl()).isEqualTo("no-store");
        assertThat(b.getSize()).isZero();
        assertThat(b.getMetadata()).containsEntry("gcslock-owner", r.owner()).containsEntry("gcslock-lease", lease.leaseId())
                .containsEntry("gcslock-ttl", "1000").containsEntry("gcslock-app", "billing")
                .containsKeys("gcslock-expires", "gcslock-host", "gcslock-pid", "gcslock-thread", "gcslock-acquired-at");
        assertThat(r.owner()).startsWith("billing-1#");
        assertThat(lease.fencingToken()).isEqualTo(b.getGeneration());
    }

    @Test
    void secondRegistryCannotAcquireAHeldLockAndSeesTheHolder() {
        GcsLockRegistry a = registry();
        GcsLockRegistry b = registry();
        Lease lease = a.tryAcquire("job").orElseThrow();
        assertThat(b.tryAcquire("job")).isEmpty();
        LockInfo info = b.inspect("job").orElseThrow();
        assertThat(info.owner()).isEqualTo(a.owner());
        assertThat(info.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(info.stale()).isFalse();
        assertThat(info.heldHere()).isFalse();
        assertThat(a.inspect("job").orElseThrow().heldHere()).isTrue();
        lease.release();
        assertThat(b.tryAcquire("job")).isPresent();
    }

    @Test
    void acquireWaitsForTheHolderAndTimesOutWithHolderInMessage() throws Exception {
        GcsLockRegistry a = registry();
        GcsLockRegistry b = registry();
        Lease lease = a.acquire("job", Duration.ZERO);
        assertThatThrownBy(() -> b.acquire("job", Duration.ofMillis(150)))
                .isInstanceOfSatisfying(LockNotAcquiredException.class, e -> {
                    assertThat(e.getMessage()).contains("'job'").contains(a.owner());
                    assertThat(e.holder()).isPresent();
                    assertThat(e.getCause()).isNull();
                });
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> waiting = pool.submit(() -> b.acquire("job", Duration.ofSeconds(5)));
            sleep(100);
            lease.release();
            Lease next = waiting.get(5, TimeUnit.SECONDS);
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void withLockReleasesWhenTheActionThrows() {
        GcsLockRegistry r = registry();
        assertThatThrownBy(() -> r.withLock("job", Duration.ZERO, lease -> {
            assertThat(lease.isHealthy()).isTrue();
            throw new IllegalStateException("boom");
        })).isInstanceOf(IllegalStateException.class).hasMessage("boom");
        assertThat(object("job")).isNull();
        assertThat(r.heldLeases()).isEmpty();
    }

    @Test
    void withLockReturnsTheResult() throws Exception {
        GcsLockRegistry r = registry();
        long token = r.withLock("job", Duration.ZERO, Lease::fencingToken);
        assertThat(token).isPositive();
    }

    private final List<Long> tokensSeen = new java.util.concurrent.CopyOnWriteArrayList<>();

    private void recordToken(long fencingToken) { // work without a result, as a user's void method
        tokensSeen.add(fencingToken);
    }

    @Test
    void runWithLockRunsWorkWithoutAResultAndReleases() throws Exception {
        GcsLockRegistry r = registry();
        r.runWithLock("job", Duration.ZERO, lease -> recordToken(lease.fencingToken()));
        assertThat(tokensSeen).hasSize(1).allSatisfy(t -> assertThat(t).isPositive());
        assertThat(object("job")).as("released").isNull();
        assertThatThrownBy(() -> r.runWithLock("job", Duration.ZERO, lease -> {
            throw new java.io.IOException("disk full");
        })).isInstanceOf(java.io.IOException.class).hasMessage("disk full");
        assertThat(object("job")).as("released after the work threw").isNull();
        assertThat(r.heldLeases()).isEmpty();
    }

    @Test
    void reentrantAcquireOnOneThreadMakesNoRequestAndReleasesWithTheOutermost() throws Exception {
        GcsLockRegistry r = registry(b -> b.refreshInterval(Duration.ofMillis(300)).ttl(Duration.ofSeconds(2)));
        Lease outer = r.acquire("job", Duration.ZERO);
        gcs.faults().resetCounters();
        Lease inner = r.acquire("job", Duration.ZERO);
        Lease inner2 = r.tryAcquire("job").orElseThrow();
        assertThat(gcs.faults().objectRequests()).isZero();
        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        inner2.release();
        inner.release();
        inner.release(); // idempotent
        assertThat(object("job")).isNotNull();
        assertThat(outer.isHealthy()).isTrue();
        outer.release();
        assertThat(object("job")).isNull();
    }

    @Test
    void otherThreadsOfOneProcessQueueLocallyAndDoNotContendOnGcs() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1)));
        int threads = 8;
        int rounds = 5;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        gcs.faults().resetCounters();
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> fs = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                fs.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < rounds; i++) {
                        r.withLock("shared", Duration.ofSeconds(20), lease -> {
                            maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            Thread.sleep(2);
                            inside.decrementAndGet();
                            return null;
                        });
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(maxInside.get()).isEqualTo(1);
        // One create and one delete per acquisition: no 412s, no GETs, because only one thread asks GCS.
        assertThat(gcs.faults().requestCount(Operation.INSERT)).isEqualTo(threads * rounds);
        assertThat(gcs.faults().requestCount(Operation.GET)).isZero();
    }

    @Test
    void tryAcquireOnAnotherThreadWhileHeldLocallyIsEmptyWithoutRequests() throws Exception {
        GcsLockRegistry r = registry();
        Lease lease = r.acquire("job", Duration.ZERO);
        gcs.faults().resetCounters();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            assertThat(pool.submit(() -> r.tryAcquire("job")).get()).isEmpty();
            assertThatThrownBy(() -> pool.submit(() -> r.acquire("job", Duration.ofMillis(50))).get())
                    .hasCauseInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("another thread of this process");
        } finally {
            pool.shutdownNow();
        }
        assertThat(gcs.faults().objectRequests()).isZero();
        lease.release();
    }

    @Test
    void leaseReleasedFromAnotherThreadFreesTheName() throws Exception {
        GcsLockRegistry r = registry();
        Lease lease = r.acquire("job", Duration.ZERO);
        Thread t = new Thread(lease::release);
        t.start();
        t.join();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            assertThat(pool.submit(() -> r.tryAcquire("job")).get()).isPresent();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void obtainGivesAJavaUtilConcurrentLock() throws Exception {
        GcsLockRegistry a = registry();
        GcsLockRegistry b = registry();
        Lock la = a.obtain("job");
        Lock lb = b.obtain("job");
        la.lock();
        try {
            assertThat(lb.tryLock()).isFalse();
            assertThat(lb.tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
            la.lock(); // reentrant
            la.unlock();
            assertThat(object("job")).isNotNull();
        } finally {
            la.unlock();
        }
        assertThat(lb.tryLock()).isTrue();
        lb.unlock();
        assertThatThrownBy(lb::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(lb::newCondition).isInstanceOf(UnsupportedOperationException.class);
    }

    /** {@code Lock.tryLock(time, unit)} with time <= 0 makes one attempt and does not wait (java.util.concurrent's contract). */
    @Test
    void tryLockWithANonPositiveTimeDoesNotWait() throws Exception {
        GcsLockRegistry a = registry();
        GcsLockRegistry b = registry();
        Lock la = a.obtain("job");
        assertThat(la.tryLock(-1, TimeUnit.SECONDS)).isTrue();
        assertThat(object("job")).isNotNull();
        assertThat(b.obtain("job").tryLock(0, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(b.obtain("job").tryLock(-5, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(b.obtain("job").tryLock(Long.MIN_VALUE, TimeUnit.DAYS)).isFalse();
        la.unlock();
        assertThat(object("job")).isNull();
    }

    /** {@code obtain(k)} twice is one lock, as in Spring Integration: {@code obtain(k).lock(); obtain(k).unlock()}. */
    @Test
    void obtainTwiceIsOneLock() throws Exception {
        GcsLockRegistry r = registry();
        r.obtain("job").lock();
        r.obtain("job").lock(); // reentrant
        r.obtain("job").unlock();
        assertThat(object("job")).as("one hold is still open").isNotNull();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            assertThatThrownBy(() -> pool.submit(() -> r.obtain("job").unlock()).get())
                    .hasCauseInstanceOf(IllegalMonitorStateException.class);
        } finally {
            pool.shutdownNow();
        }
        r.obtain("job").unlock();
        assertThat(object("job")).isNull();
        assertThatThrownBy(() -> r.obtain("job").unlock()).isInstanceOf(IllegalMonitorStateException.class);
        Lock lock = r.obtain("other");
        assertThat(lock.tryLock()).isTrue();
        r.obtain("other").unlock();
        assertThat(object("other")).isNull();
    }

    /**
     * DESIGN.md rule 17: per-name local state does not grow with the number of names ever used (per-tenant
     * names). Names that are held, waited on, or in a hold-at-least delay keep theirs.
     */
    @Test
    void localStateOfIdleNamesIsEvicted() throws Exception {
        GcsLockRegistry r = registry();
        GcsLockRegistry other = registry();
        Lease held = r.tryAcquire("held").orElseThrow();
        Lease deferred = r.tryAcquire("deferred").orElseThrow();
        r.releaseAfter(deferred, Duration.ofSeconds(30));
        Lease blocking = r.tryAcquire("waited").orElseThrow();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Thread[] waiterThread = new Thread[1];
            Future<Lease> waiter = pool.submit(() -> {
                waiterThread[0] = Thread.currentThread();
                return r.acquire("waited", Duration.ofSeconds(30));
            });
            await("the waiter to queue on the local permit")
                    .atMost(Duration.ofSeconds(30)).until(() -> waiterThread[0] != null
                    && waiterThread[0].getState() == Thread.State.TIMED_WAITING); // queued on the local permit
            Lease foreign = other.tryAcquire("busy").orElseThrow();
            for (int i = 0; i < 200; i++) {
                r.tryAcquire("tenant-" + i).orElseThrow().release();
            }
            Lock lock = r.obtain("via-lock");
            lock.lock();
            lock.unlock();
            assertThat(r.tryAcquire("busy")).isEmpty();
            assertThatThrownBy(() -> r.acquire("busy", Duration.ofMillis(50))).isInstanceOf(LockNotAcquiredException.class);
            gcs.faults().failNext(1, 403, Operation.INSERT);
            assertThatThrownBy(() -> r.tryAcquire("denied")).isInstanceOf(GcsLockException.class);
            assertThat(r.localStateSize()).as("held, in a hold-at-least delay, waited on").isEqualTo(3);

            blocking.release();
            Lease next = waiter.get(10, TimeUnit.SECONDS);
            next.release();
            held.release();
            foreign.release();
            assertThat(r.localStateSize()).as("only the name in its hold-at-least delay").isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * DESIGN.md rule 17: eviction never splits one name into two local slots. The interleaving: a holder H
     * of k; a waiter W queued on k's permit; H releases and hands the permit to W. If k's slot were evicted
     * then (it has no lease for a moment), W would own a slot that is no longer in the map: the next thread
     * asking for k would make a second slot, become a second local owner and go to GCS (where, if W's
     * create had not yet been registered, it would even delete W's fresh object as "leaked"), and W's
     * release would not find its slot, so its object would never be deleted.
     */
    @Test
    void evictionNeverMakesASecondLocalOwnerOfAQueuedName() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1)));
        Lease h = r.acquire("k", Duration.ZERO);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Thread[] waiterThread = new Thread[1];
            CountDownLatch releaseW = new CountDownLatch(1);
            Future<Long> w = pool.submit(() -> {
                waiterThread[0] = Thread.currentThread();
                try (Lease lease = r.acquire("k", Duration.ofSeconds(30))) {
                    releaseW.await();
                    return lease.fencingToken();
                }
            });
            await("W to queue on the local permit").atMost(Duration.ofSeconds(30)).until(() -> waiterThread[0] != null
                    && waiterThread[0].getState() == Thread.State.TIMED_WAITING); // queued on the local permit
            h.release();
            await("W to take k after the other holder released it")
                    .atMost(Duration.ofSeconds(30)).until(() -> r.heldLeases().size() == 1);
            gcs.faults().resetCounters();
            assertThat(pool.submit(() -> r.tryAcquire("k")).get()).as("W holds k").isEmpty();
            assertThat(gcs.faults().objectRequests()).as("k is queued locally: nothing sent").isZero();
            releaseW.countDown();
            assertThat(w.get(10, TimeUnit.SECONDS)).isNotEqualTo(h.fencingToken());
        } finally {
            pool.shutdownNow();
        }
        assertThat(object("k")).as("W's release found its slot and deleted the object").isNull();
        assertThat(r.localStateSize()).isZero();
        assertThat(r.tryAcquire("k")).isPresent();
    }

    /** Rule 17 under contention: many threads, few names, one local owner per name at a time, no state left. */
    @Test
    void evictionUnderContentionKeepsOneLocalOwnerPerName() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(5)).refreshInterval(Duration.ofSeconds(1)));
        AtomicInteger tookOver = new AtomicInteger();
        r.addListener(new LockEventListener() {
            @Override
            public void tookOver(String name, LockInfo staleHolder) {
                tookOver.incrementAndGet();
            }
        });
        String[] names = {"a", "b"};
        AtomicInteger[] inside = {new AtomicInteger(), new AtomicInteger()};
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < 15; i++) {
                        int n = (id + i) % 2;
                        Optional<Lease> lease = (i % 3 == 0) ? r.tryAcquire(names[n])
                                : Optional.of(r.acquire(names[n], Duration.ofSeconds(30)));
                        if (lease.isEmpty()) {
                            continue;
                        }
                        try (Lease l = lease.get()) {
                            acquisitions.incrementAndGet();
                            if (inside[n].incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            Thread.yield();
                            inside[n].decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps.get()).isZero();
        assertThat(tookOver.get()).as("this process never deleted its own live object").isZero();
        assertThat(acquisitions.get()).isPositive();
        assertThat(r.localStateSize()).isZero();
        assertThat(object("a")).isNull();
        assertThat(object("b")).isNull();
    }

    @Test
    void listShowsEveryLockUnderThePrefix() {
        GcsLockRegistry r = registry();
        r.tryAcquire("a").orElseThrow();
        r.tryAcquire("b/c").orElseThrow();
        assertThat(r.list()).extracting(LockInfo::name).containsExactly("a", "b/c");
        assertThat(r.list()).allMatch(LockInfo::heldHere);
        assertThat(r.heldLeases()).extracting(Lease::name).containsExactlyInAnyOrder("a", "b/c");
    }

    @Test
    void closeReleasesEveryHeldLeaseSoAnotherInstanceAcquiresAtOnce() {
        GcsLockRegistry a = registry();
        GcsLockRegistry b = registry();
        Lease l1 = a.tryAcquire("x").orElseThrow();
        a.tryAcquire("y").orElseThrow();
        a.close();
        assertThat(l1.isHealthy()).isFalse();
        assertThat(b.tryAcquire("x")).isPresent();
        assertThat(b.tryAcquire("y")).isPresent();
        assertThatThrownBy(() -> a.tryAcquire("z")).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void releaseIsIdempotentAndAReleasedLeaseIsUnhealthy() {
        GcsLockRegistry r = registry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        lease.release();
        lease.release();
        lease.close();
        assertThat(lease.isHealthy()).isFalse();
        assertThatThrownBy(lease::checkHealthy).isInstanceOf(LockLostException.class).hasMessageContaining("released");
    }

    @Test
    void fencingTokensGrowAcrossAcquisitions() {
        GcsLockRegistry r = registry();
        long last = 0;
        for (int i = 0; i < 5; i++) {
            Lease l = r.tryAcquire("job").orElseThrow();
            assertThat(l.fencingToken()).isGreaterThan(last);
            last = l.fencingToken();
            l.release();
        }
    }

    @Test
    void releaseAfterKeepsTheLockUntilTheDelay() {
        GcsLockRegistry a = registry();
        GcsLockRegistry b = registry();
        Lease lease = a.tryAcquire("job").orElseThrow();
        a.releaseAfter(lease, Duration.ofMillis(300));
        assertThat(b.tryAcquire("job")).isEmpty();
        await("the deferred release to delete the object after its 300 ms delay")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job") == null);
        assertThat(b.tryAcquire("job")).isPresent();
    }

    /**
     * DESIGN.md rule 13. The interleaving: a single-thread scheduler runs a "hold at least" job, which
     * calls {@code releaseAfter(lease, delay)} and returns; the next tick comes on the same thread before the
     * delay ends. If the releasing thread still counted as the owner, that tick would get a reentrant hold
     * and run the job again inside the hold. No thread of this process may get the name until the delayed
     * release has run; other processes see it held; then the object is deleted and the name is free.
     */
    @Test
    void afterReleaseAfterNoThreadOfThisProcessGetsTheNameBeforeTheDelayEnds() throws Exception {
        GcsLockRegistry r = registry();
        GcsLockRegistry other = registry();
        Lease lease = r.tryAcquire("job").orElseThrow();
        r.releaseAfter(lease, Duration.ofSeconds(2));

        assertThat(r.tryAcquire("job")).as("the releasing thread, as the scheduler's next tick").isEmpty();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(100))).isInstanceOf(LockNotAcquiredException.class);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            assertThat(pool.submit(() -> r.tryAcquire("job")).get()).as("another thread of this process").isEmpty();
        } finally {
            pool.shutdownNow();
        }
        assertThat(other.tryAcquire("job")).as("another process").isEmpty();
        assertThat(object("job")).isNotNull();
        assertThat(lease.isHealthy()).as("the checks above ran within the delay, the lease is still kept").isTrue();

        // The same thread waits for the delayed release; the object was deleted and a new one created.
        Lease next = r.acquire("job", Duration.ofSeconds(10));
        assertThat(lease.isHealthy()).as("the delayed release has run").isFalse();
        assertThat(next).isInstanceOf(GcsLease.class); // a fresh acquisition, not a reentrant hold
        assertThat(next.fencingToken()).isNotEqualTo(lease.fencingToken());
        next.release();
        assertThat(object("job")).isNull();
        assertThat(other.tryAcquire("job")).as("the name is free once released").isPresent();
    }

    /**
     * DESIGN.md rule 13 against rule 17's reentry, which looks at the owner's hold and then counts a nested one in, in
     * two steps. The interleaving: the owner's thread asks for the name again and finds its hold (count 1); before it
     * counts itself in, another thread gives that outermost hold back with {@code releaseAfter} (count 0, nobody owns
     * the name). Counting in without looking again gave the owner a nested hold of a name whose delayed release was
     * already under way: the "hold at least" job would run again inside the hold. The race is put exactly there
     * through the registry's ticker, which the reentry reads (the lease's health check) between its two steps.
     */
    @Test
    void aReleaseAfterOnAnotherThreadRacingTheOwnersReentryLeavesTheOwnerNoHold() throws Exception {
        AtomicReference<Runnable> betweenLookAndCount = new AtomicReference<>();
        LongSupplier ticker = () -> {
            Runnable race = betweenLookAndCount.get();
            if (race != null && insideReentry() && betweenLookAndCount.compareAndSet(race, null)) {
                race.run();
            }
            return System.nanoTime();
        };
        GcsLockRegistry r = registry(b -> b.ticker(ticker));
        Lease lease = r.tryAcquire("job").orElseThrow();
        betweenLookAndCount.set(() -> {
            try {
                // another thread of the process (the owner handed its lease over) gives the outermost hold back now
                CompletableFuture.runAsync(() -> r.releaseAfter(lease, Duration.ofSeconds(30))).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });

        Optional<Lease> nested = r.tryAcquire("job");

        assertThat(betweenLookAndCount.get()).as("the releaseAfter ran between the reentry's look and its count").isNull();
        assertThat(nested).as("the owner's nested tryAcquire, its hold given back by releaseAfter meanwhile").isEmpty();
        assertThat(lease.isHealthy()).as("kept for the delay").isTrue();
        assertThat(object("job")).isNotNull();
    }

    /** Whether the calling thread is inside LocalHolds#reenter (between its look at the hold and its count). */
    private static boolean insideReentry() {
        return StackWalker.getInstance().walk(frames -> frames.anyMatch(f ->
                f.getClassName().equals(LocalHolds.class.getName()) && f.getMethodName().equals("reenter")));
    }

    /** Rule 13 with a nested hold still open: the thread keeps the name until its inner hold ends, not after. */
    @Test
    void releaseAfterOfTheOuterHoldKeepsNestedHoldsButNoNewOnes() throws Exception {
        GcsLockRegistry r = registry();
        Lease outer = r.tryAcquire("job").orElseThrow();
        Lease inner = r.tryAcquire("job").orElseThrow();
        r.releaseAfter(outer, Duration.ofSeconds(2));
        Lease nested = r.tryAcquire("job").orElseThrow(); // the thread still holds it through `inner`
        nested.release();
        inner.release();
        assertThat(object("job")).as("kept for the delay").isNotNull();
        assertThat(r.tryAcquire("job")).as("no hold of this thread is left").isEmpty();
        assertThat(outer.isHealthy()).as("the checks above ran within the delay").isTrue();
        await("the deferred release to delete the object after its 2 s delay")
                .atMost(Duration.ofSeconds(30)).until(() -> object("job") == null);
        assertThat(r.tryAcquire("job")).isPresent();
    }

    @Test
    void inspectOfAFreeLockIsEmpty() {
        assertThat(registry().inspect("nothing")).isEqualTo(Optional.empty());
    }
}
