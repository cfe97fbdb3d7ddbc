package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DESIGN.md rule 16 at its edges (from an independent review of the request economy): what the waiting pace
 * and the per-name history must not break — a follower's takeover, an interrupt or a hold-at-least in the
 * middle of the pace, registries sharing an identity label, and the history's bound under many threads.
 */
class AcquireEconomyEdgeCasesTest extends EmulatorTestBase {

    /**
     * A follower using the Lock view's tryLock(100 ms) back to back (Spring Integration's
     * LockRegistryLeaderInitiator pattern) keeps its waiting pace across calls (most calls send nothing), yet
     * takes over after the leader releases: its next look comes within the poll cap.
     */
    @Test
    void aFollowerCallingTryLockBackToBackTakesOverAfterTheLeaderReleases() throws Exception {
        GcsLockRegistry leader = holder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofMillis(50), Duration.ofMillis(400), 2.0));
        Lease held = leader.tryAcquire("job").orElseThrow();
        Lock follower = r.obtain("job");
        boolean acquired = false;
        int calls = 0;
        for (; calls < 200 && !acquired; calls++) {
            if (calls == 20) {
                held.release();
            }
            acquired = follower.tryLock(100, TimeUnit.MILLISECONDS);
        }
        assertThat(acquired).as("the follower took over after %s calls", calls).isTrue();
        assertThat(object("job").getMetadata()).containsEntry("gcslock-owner", r.owner());
        follower.unlock();
    }

    /**
     * Interrupt while sleeping until the next look (the start of a waiting call, kept pace from an earlier call):
     * InterruptedException, no request, the local permit given back: a one-shot right after it asks and takes a
     * name released meanwhile.
     */
    @Test
    void aWaiterInterruptedWhileSleepingUntilItsNextLookGivesBackThePermitAndTheNextCallLooks() throws Exception {
        GcsLockRegistry other = longHolder();
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofSeconds(20), Duration.ofSeconds(30), 2.0));
        Lease held = other.tryAcquire("job").orElseThrow();
        // A waiting call sees it held: its look sets the pace, the next look is due in 7.5-15 s.
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(100))).isInstanceOf(LockNotAcquiredException.class);
        gcs.faults().resetCounters();
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> waiter = thread.submit(() -> r.acquire("job", Duration.ofSeconds(30)));
            sleep(200);
            thread.shutdownNow(); // interrupts the waiter
            assertThatThrownBy(() -> waiter.get(3, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(thread.awaitTermination(3, TimeUnit.SECONDS)).isTrue();
            assertThat(gcs.faults().objectRequests()).as("no look was due").isZero();
            held.release();
            assertThat(r.tryAcquire("job")).as("permit given back; the one-shot asks and takes it").isPresent();
        } finally {
            thread.shutdownNow();
        }
    }

    /**
     * Hold-at-least followed by a wait of the same process: the name was last held by this process, so the
     * waiter's history is empty: it waits on the local permit (no GCS request) and creates once the delayed
     * release has deleted the object — one create, no read, no waiting pace borrowed from anyone.
     */
    @Test
    void aWaiterOfTheSameProcessAfterAHoldAtLeastReleaseCreatesWithoutARead() throws Exception {
        GcsLockRegistry r = registry();
        Lease first = r.tryAcquire("job").orElseThrow();
        r.releaseAfter(first, Duration.ofMillis(400));
        gcs.faults().resetCounters();
        Lease second = r.acquire("job", Duration.ofSeconds(5));
        long reads = reads();
        long inserts = inserts();
        long deletes = gcs.faults().requestCount(Operation.DELETE);
        assertThat(first.isHealthy()).isFalse();
        assertThat(second.fencingToken()).isEqualTo(object("job").getGeneration());
        assertThat(reads).as("no read: this process held it last").isZero();
        assertThat(inserts).isEqualTo(1);
        assertThat(deletes).as("the delayed release").isEqualTo(1);
        second.release();
    }

    /**
     * Two registries of one JVM configured with the same identity label: read-first classifies the object it
     * reads by owner; if the owner were the label alone, B would take A's live lock for its own leaked one and
     * delete it (rule 4). The random part per registry keeps them apart: B reads, sees it held, never deletes.
     */
    @Test
    void registriesSharingAnIdentityLabelNeverTakeEachOthersLiveLockForALeakedOne() {
        GcsLockRegistry a = registry(x -> x.identity("same-label").ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2)));
        GcsLockRegistry b = registry(x -> x.identity("same-label"));
        Lease held = a.tryAcquire("job").orElseThrow();
        for (int i = 0; i < 3; i++) {
            assertThat(b.tryAcquire("job")).as("create first, then read first").isEmpty();
        }
        assertThatThrownBy(() -> b.acquire("job", Duration.ofMillis(300))).isInstanceOf(LockNotAcquiredException.class);
        assertThat(held.isHealthy()).isTrue();
        assertThat(object("job").getGeneration()).isEqualTo(held.fencingToken());
        assertThat(gcs.faults().requestCount(Operation.DELETE)).isZero();
    }

    /**
     * ContentionHistory is bounded (10,000 names, least recently used forgotten) and consistent when many threads
     * of one process record sightings of different names and of the same name at once.
     */
    @Test
    void theContentionHistoryStaysBoundedAndConsistentUnderManyThreads() throws Exception {
        ContentionHistory history = new ContentionHistory();
        int threads = 8;
        int perThread = 5_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        String name = "n" + id + "-" + i;
                        history.sawHeld(name, null, i, i);
                        history.nextLookAt(name, i + 10, true);
                        history.sawHeld("shared", null, i, i - 1);
                        history.nextLookAt("shared", i + 10, i % 2 == 0);
                        history.createOutcomeUnknown(name, i);
                        if (i % 3 == 0) {
                            history.sawFreeOrAcquired(name);
                        }
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        int remembered = 0;
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                if (history.sighting("n" + t + "-" + i) != null) {
                    remembered++;
                }
            }
        }
        assertThat(remembered).as("names remembered").isLessThanOrEqualTo(10_000).isGreaterThan(0);
        // The least recently used name goes first: touch one, add 10,000 more, it is gone; the last ones stay.
        ContentionHistory lru = new ContentionHistory();
        lru.sawHeld("oldest", null, 0, 0);
        for (int i = 0; i < 10_000; i++) {
            lru.sawHeld("x" + i, null, i, i);
        }
        assertThat(lru.sighting("oldest")).isNull();
        assertThat(lru.sighting("x0")).isNotNull();
        assertThat(lru.sighting("x9999")).isNotNull();
    }
}
