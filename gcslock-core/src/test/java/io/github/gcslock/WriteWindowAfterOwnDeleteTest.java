package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule 21 for a new acquisition's create: it waits out the write window after this process's last DELETE of the
 * object (a release, a forced delete), so it meets no 429 of its own making. The emulator enforces a 300 ms window
 * (GCS's 1 s scaled down) and counts the 429s it answers; the registry uses the same window. The nemesis cases: the
 * DELETE's reply lost, close() while the create waits, an interrupted caller, the same thread coming back in a loop.
 */
class WriteWindowAfterOwnDeleteTest extends WriteWindowTestBase {

    /** The same thread comes back, release after acquire, three times: each create one request, no 429. */
    @Test
    void releaseAndReacquireInALoopCostsOneCreateEachWithout429() throws Exception {
        GcsLockRegistry r = windowed();
        r.acquire("job", Duration.ZERO).release();
        gcs.faults().resetCounters();
        for (int i = 0; i < 3; i++) {
            long t0 = System.nanoTime();
            Lease l = r.tryAcquire("job").orElseThrow();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the create waited out the window after the DELETE")
                    .isGreaterThanOrEqualTo(WINDOW.minusMillis(50));
            l.release();
        }
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        assertThat(gcs.faults().requestCount(Operation.INSERT)).as("creates").isEqualTo(3);
    }

    /**
     * Lost reply: the release's DELETE commits and its reply is lost; the client's retry finds it gone. The window
     * counts from the end of that call, so the reacquire's create still meets no 429.
     */
    @Test
    void aReleaseWhoseDeleteReplyWasLostStillSpacesTheNextCreate() throws Exception {
        GcsLockRegistry r = windowed();
        Lease first = r.acquire("job", Duration.ZERO);
        gcs.faults().dropNextReply(Operation.DELETE);
        first.release();
        assertThat(object("job")).isNull();
        gcs.faults().resetCounters();
        Optional<Lease> again = r.tryAcquire("job");
        assertThat(again).isPresent();
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        again.get().release();
    }

    /** A forced delete of another process's object is a write of ours too: our create right after it waits the window. */
    @Test
    void aCreateRightAfterOurForcedDeleteWaitsOutTheWindow() throws Exception {
        GcsLockRegistry r = windowed();
        plantForeignLock("job", Duration.ofSeconds(30)); // another process's, not refreshed meanwhile
        sleep(WINDOW.toMillis() + 50); // its create is a window old
        LockInfo info = r.inspect("job").orElseThrow();
        assertThat(r.forceRelease("job", info.fencingToken(), info.metageneration())).isTrue();
        gcs.faults().resetCounters();
        Optional<Lease> ours = r.tryAcquire("job");
        assertThat(ours).isPresent();
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        ours.get().release();
    }

    /**
     * close() while a create waits out the window after our release: the call fails "closed" without creating, so
     * nothing is left in the bucket once close() and the call have returned.
     */
    @Test
    void closeWhileACreateWaitsOutTheWindowSendsNoCreate() throws Exception {
        GcsLockRegistry r = windowed();
        r.acquire("job", Duration.ZERO).release();
        gcs.faults().resetCounters();
        CountDownLatch started = new CountDownLatch(1);
        r.addListener(new LockEventListener() {
            @Override
            public void acquireStarted(String name, AcquireMode mode) {
                started.countDown();
            }
        });
        CompletableFuture<Object> call = CompletableFuture.supplyAsync(() -> {
            try {
                return r.tryAcquire("job");
            } catch (Throwable e) {
                return e;
            }
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        sleep(100); // inside the window's wait
        r.close();
        Object outcome = call.get(10, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOf(IllegalStateException.class);
        assertThat(((Throwable) outcome).getMessage()).contains("closed");
        assertThat(gcs.faults().requestCount(Operation.INSERT)).as("creates sent after close()").isZero();
        assertThat(object("job")).isNull();
    }

    /** An interrupted caller: the window's wait ignores the interrupt, the create meets no 429, the flag comes back. */
    @Test
    void anInterruptedReacquireWaitsOutTheWindowAndKeepsItsFlag() throws Exception {
        GcsLockRegistry r = windowed();
        r.acquire("job", Duration.ZERO).release();
        gcs.faults().resetCounters();
        AtomicBoolean flag = new AtomicBoolean();
        Object outcome = CompletableFuture.supplyAsync(() -> {
            Thread.currentThread().interrupt();
            Object o;
            try {
                o = r.tryAcquire("job");
            } catch (Throwable e) {
                o = e;
            }
            flag.set(Thread.interrupted());
            return o;
        }).get(10, TimeUnit.SECONDS);
        assertThat(flag).as("the interrupt flag came back").isTrue();
        assertThat(gcs.faults().rateLimited()).as("429s").isZero();
        if (outcome instanceof Optional<?> o) {
            assertThat(o).as("the name is free: a one-shot that asked gets it").isPresent();
            ((Lease) o.get()).release();
        } else {
            assertThat((Throwable) outcome).hasMessageContaining("interrupted");
        }
        assertThat(object("job")).isNull();
    }
}
