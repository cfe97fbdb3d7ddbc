package io.github.gcslock;

import io.github.gcslock.test.ClientFaults.Partition;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Attacks that held, from the second independent review of DESIGN.md rule 16 (the newest parts: a clean release lets the next one-shot
 * refuse a 412 unread; after a 429 a waiter creates again without a read; the poll cap of twice the time
 * waited, kept across calls). Each test
 * asserts what SHOULD hold; the comment names the interleaving.
 */
class EconomyReview2HeldTest extends EmulatorTestBase {

    private final List<GcsLockRegistry> own = new ArrayList<>();

    @AfterEach
    void closeOwn() {
        gcs.faults().reset();
        own.forEach(GcsLockRegistry::close);
    }

    /** A registry of a separate simulated process: its own client, so {@code faults().client(name)} cuts it alone. */
    private GcsLockRegistry process(String client, Consumer<GcsLockRegistry.Builder> custom) {
        GcsLockRegistry.Builder b = GcsLockRegistry.builder(gcs.storage(client), BUCKET)
                .ttl(TTL)
                .refreshInterval(REFRESH)
                .operationTimeout(Duration.ofMillis(500))
                .writeRateWindow(Duration.ofMillis(20))
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0);
        custom.accept(b);
        GcsLockRegistry r = b.build();
        own.add(r);
        return r;
    }

    private static Consumer<GcsLockRegistry.Builder> ttl20s() {
        return b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2));
    }

    /**
     * Cron (one-shot only) instances A, B, C in separate processes. A wins a tick and releases cleanly (so A's
     * next one-shots refuse unread); B wins the next tick and crashes mid-hold (its client partitioned: no
     * refresh, no delete). A and C keep ticking: one of them must take B's object over once it is stale (reads
     * at least every quarter TTL; clean-release knowledge ages like any other), and nobody else may hold it.
     */
    @Test
    void aCronWinnerThatCrashesMidHoldIsTakenOverByInstancesThatOnlyTryOnce() {
        GcsLockRegistry a = process("a", b -> { });
        GcsLockRegistry bb = process("b", b -> { });
        GcsLockRegistry c = process("c", b -> { });
        a.tryAcquire("job").orElseThrow().release();
        assertThat(c.tryAcquire("job")).isPresent().get().satisfies(Lease::release);
        Lease crashed = bb.tryAcquire("job").orElseThrow();
        assertThat(a.tryAcquire("job")).isEmpty();
        assertThat(c.tryAcquire("job")).isEmpty();
        gcs.faults().client("b").partition(Partition.FAIL);
        Lease next = null;
        for (int i = 0; i < 40 && next == null; i++) { // ticks every 100 ms for up to 4 s (TTL 1 s)
            next = a.tryAcquire("job").or(() -> c.tryAcquire("job")).orElse(null);
            sleep(100);
        }
        assertThat(next).as("taken over within 4 s of the crash (TTL 1 s)").isNotNull();
        assertThat(next.fencingToken()).isGreaterThan(crashed.fencingToken());
        assertThat(crashed.isHealthy()).isFalse();
    }

    /**
     * A release whose DELETE could not delete (the request hangs: our object is leaked) after an earlier clean
     * release of the same name: the clean-release record must not survive into the next one-shot (it was
     * cleared by the acquire in between), so the 412 from our own leak is read and retaken at once (rule 4).
     */
    @Test
    void aFailedReleaseAfterAnEarlierCleanOneLeavesNoCleanRecord() {
        GcsLockRegistry r = process("r", ttl20s());
        GcsLockRegistry other = registry(ttl20s());
        r.tryAcquire("job").orElseThrow().release(); // clean
        Lease second = r.tryAcquire("job").orElseThrow();
        gcs.faults().client("r").partition(Partition.HANG);
        second.release(); // DELETE never served: our object is left behind
        gcs.faults().client("r").heal();
        assertThat(object("job")).as("leaked").isNotNull();
        assertThat(other.tryAcquire("job")).as("another process waits out the TTL").isEmpty();
        Lease third = r.tryAcquire("job").orElseThrow(); // the leak of ours: read and retaken at once
        assertThat(third.fencingToken()).isEqualTo(object("job").getGeneration());
    }

    /**
     * A hold-at-least release (releaseAfter) is a clean release when its delayed DELETE deletes the object: the
     * record of it is kept, and a waiting call of this process right after it acquires the name again (its
     * create after a 429 goes again without a read).
     */
    @Test
    void aHoldAtLeastReleaseCountsAsCleanWhenItsDeleteDeletes() throws Exception {
        gcs.writeRateLimit(Duration.ofMillis(300));
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2))
                .writeRateWindow(Duration.ofMillis(300)));
        Lease mine = r.tryAcquire("job").orElseThrow();
        r.releaseAfter(mine, Duration.ofMillis(200));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (object("job") != null && System.nanoTime() < deadline) {
            sleep(10);
        }
        assertThat(object("job")).as("the delayed release deleted it").isNull();
        sleep(50); // let the release finish (it frees the local permit after the DELETE's reply)
        gcs.faults().resetCounters();
        Lease again = r.acquire("job", Duration.ofSeconds(5));
        assertThat(again.fencingToken()).isEqualTo(object("job").getGeneration());
        again.release();
    }

    /**
     * A create that met 429 is followed by a create without a read; if that create meets a LIVE holder (412), the
     * waiter reads it once and from then on polls with reads: 2 creates in all, never a create loop against a
     * live holder.
     */
    @Test
    void aCreateWithoutAReadAfter429MeetsALiveHolderAndFallsBackToReads() {
        GcsLockRegistry other = registry(ttl20s());
        GcsLockRegistry r = registry(b -> b.backoff(Duration.ofMillis(50), Duration.ofMillis(100), 2.0));
        other.tryAcquire("job").orElseThrow();
        gcs.faults().resetCounters();
        gcs.faults().failNext(1, 429, Operation.INSERT);
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(800))).isInstanceOf(LockNotAcquiredException.class);
        assertThat(inserts()).as("the 429'd create and one more, then reads").isEqualTo(2);
        assertThat(reads()).isPositive();
    }

    /**
     * The clean-release rule says "no leak of ours is left", but one can come later: a create of the very
     * acquisition that won, held back by the network (timed out on our side, re-sent through the retrying client,
     * which won), commits after our clean release — an object of ours with a lease id no longer live. The next
     * one-shot (within a quarter TTL of the clean release, so it would refuse unread) must still read it and retake
     * it (rule 4): the create of unknown outcome is on record for a TTL.
     */
    @Test
    void aHeldBackCreateOfTheWinningAcquisitionThatCommitsAfterTheCleanReleaseIsRetaken() throws Exception {
        GcsLockRegistry other = registry(ttl20s());
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(4)).refreshInterval(Duration.ofMillis(500)));
        Lease first = other.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job")).isEmpty(); // r saw it held: its next one-shot creates through the single try
        first.release();
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch commit = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            arrived.countDown();
            try {
                commit.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Lease won = r.tryAcquire("job").orElseThrow(); // single try timed out; the retrying client's create won
        assertThat(arrived.getCount()).isZero();
        won.release(); // clean: its DELETE deleted the object
        assertThat(object("job")).isNull();
        commit.countDown(); // the held-back create commits now: an object of ours, its lease id no longer live
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (object("job") == null && System.nanoTime() < deadline) {
            sleep(10);
        }
        assertThat(object("job").getMetadata()).containsEntry("gcslock-owner", r.owner());
        assertThat(other.tryAcquire("job")).as("another process waits for our leak's TTL").isEmpty();
        Lease again = r.tryAcquire("job").orElse(null);
        assertThat(again).as("our own leak after a clean release is read and retaken").isNotNull();
        assertThat(again.fencingToken()).isEqualTo(object("job").getGeneration());
    }

    /**
     * Safety under faults: four processes (separate clients) mixing one-shot ticks and short waits with a clean
     * release after each hold, while creates and deletes have replies dropped and slowed. Whatever rule 16
     * refuses unread or creates without a read, no two healthy leases of "job" overlap, and no create-without-read
     * hands out a lease while another holds one.
     */
    @Test
    void refusingUnreadAndCreatingWithoutAReadNeverHandOutTwoHealthyLeases() throws Exception {
        gcs.faults().seed(42).dropReplies(0.1, Operation.INSERT, Operation.DELETE);
        gcs.writeRateLimit(Duration.ofMillis(20));
        int n = 4;
        List<GcsLockRegistry> regs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            regs.add(process("p" + i, b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(250))));
        }
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        AtomicReference<String> violation = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                GcsLockRegistry reg = regs.get(i);
                boolean waits = i % 2 == 0;
                fs.add(pool.submit(() -> {
                    while (!stop.get()) {
                        Lease l = null;
                        try {
                            l = waits ? reg.acquire("job", Duration.ofMillis(150)) : reg.tryAcquire("job").orElse(null);
                        } catch (GcsLockException e) {
                            // busy or GCS trouble: next tick
                        } catch (InterruptedException e) {
                            return;
                        }
                        if (l == null) {
                            sleep(15);
                            continue;
                        }
                        acquisitions.incrementAndGet();
                        if (holding.incrementAndGet() > 1 && l.isHealthy()) {
                            violation.compareAndSet(null, "two holders at once, one of them " + reg.owner() + " token "
                                    + l.fencingToken());
                        }
                        sleep(20);
                        holding.decrementAndGet();
                        try {
                            l.release();
                        } catch (RuntimeException e) {
                            // release trouble under faults: the lease ends anyway
                        }
                    }
                }));
            }
            sleep(4000);
            stop.set(true);
            for (Future<?> f : fs) {
                f.get(20, TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        assertThat(violation.get()).as("overlap").isNull();
        assertThat(acquisitions.get()).as("the lock kept moving").isGreaterThan(5);
    }
}
