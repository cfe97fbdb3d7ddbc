package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** DESIGN.md rule 14: {@code close()} ends with every object of ours deleted, deferred releases included. */
class CloseDuringReleaseTest extends EmulatorTestBase {

    /**
     * The interleaving (found by an independent review): a hold-at-least release ({@code releaseAfter})
     * comes due and its DELETE is in flight on the refresher thread when the application shuts down.
     * {@code close()} sees the lease already releasing, so it skips it, and used to shut the scheduler
     * down at once ({@code shutdownNow}) and return: the DELETE could be interrupted in the client's
     * retry backoff, and even when not, the JVM exits before it completes (the thread is a daemon), so
     * the object stays until its TTL and the next instance waits for it. {@code close()} must wait for
     * releases already running.
     */
    @Test
    void closeWaitsForADeferredReleaseWhoseDeleteIsInFlight() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(30)).refreshInterval(Duration.ofSeconds(5))
                .operationTimeout(Duration.ofSeconds(5)));
        Lease lease = r.tryAcquire("report").orElseThrow();
        CountDownLatch deleteArrived = new CountDownLatch(1);
        CountDownLatch closeReturned = new CountDownLatch(1);
        AtomicBoolean closeReturnedBeforeTheDelete = new AtomicBoolean();
        gcs.faults().beforeNext(Operation.DELETE, () -> {
            deleteArrived.countDown();
            // The deferred release's DELETE is held here: has close() returned before GCS got to it? A close()
            // that does not wait returns within milliseconds; 4 s leaves room for a loaded machine to start
            // the closing thread (at 1.5 s the mutation without the wait survived once under load average ~10).
            closeReturnedBeforeTheDelete.set(awaitQuietly(closeReturned, 4000));
        });
        r.releaseAfter(lease, Duration.ofMillis(50));
        assertThat(deleteArrived.await(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture.runAsync(() -> {
            r.close();
            closeReturned.countDown();
        }).get(30, TimeUnit.SECONDS);

        assertThat(closeReturnedBeforeTheDelete).as("close() returned while our release's DELETE had not been processed").isFalse();
        assertThat(object("report")).as("close() returned: our object must be gone").isNull();
    }

    /**
     * Rule 14: close() stops the refresher only once its running tasks have ended (within its one bound), so it never
     * interrupts a hold-at-least release running there. close() waits for that release in any case (it is in flight),
     * and rule 12 sees an interrupted release through; but an interrupt may break a call that is then sent again, which
     * the bound close() waits is not made for. The interleaving: the release's DELETE is held by GCS when close() comes;
     * close() that shut the refresher down at once interrupted the very thread it then waited for.
     */
    @Test
    void closeDoesNotInterruptADeferredReleaseWhoseDeleteIsInFlight() throws Exception {
        HookedTransport transport = new HookedTransport();
        AtomicReference<Thread> deleting = new AtomicReference<>();
        transport.hook = (method, url) -> {
            if (method.equals("DELETE") && url.contains("/o/gcslock%2Freport")) {
                deleting.compareAndSet(null, Thread.currentThread());
            }
        };
        GcsLockRegistry r = registry(transport.client(gcs), b -> b.ttl(Duration.ofSeconds(30))
                .refreshInterval(Duration.ofSeconds(5)).operationTimeout(Duration.ofSeconds(5)));
        Lease lease = r.tryAcquire("report").orElseThrow();
        CountDownLatch deleteArrived = new CountDownLatch(1);
        CountDownLatch mayAnswer = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.DELETE, () -> {
            deleteArrived.countDown();
            awaitQuietly(mayAnswer, 20_000);
        });
        r.releaseAfter(lease, Duration.ofMillis(50));
        assertThat(deleteArrived.await(10, TimeUnit.SECONDS)).isTrue();
        Thread releasing = deleting.get();
        assertThat(releasing).as("the thread sending the deferred release's DELETE").isNotNull();

        AtomicReference<Thread> closing = new AtomicReference<>();
        CompletableFuture<Void> close = CompletableFuture.runAsync(() -> {
            closing.set(Thread.currentThread());
            r.close();
        });
        try {
            // close() has done all it does before it waits (a timed wait, for the refresher or the releases in flight)
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (closing.get() == null || closing.get().getState() != Thread.State.TIMED_WAITING) {
                assertThat(System.nanoTime() - end).as("close() reached its wait").isNegative();
                Thread.sleep(5);
            }
            assertThat(close).as("close() returned while our release's DELETE was held").isNotDone();
            assertThat(releasing.isInterrupted()).as("close() interrupted the release it waits for").isFalse();
        } finally {
            mayAnswer.countDown();
        }
        close.get(30, TimeUnit.SECONDS);
        assertThat(object("report")).as("close() returned: our object must be gone").isNull();
    }

    /**
     * Waits for {@code latch} up to {@code millis}, through interrupts: a close() that does not wait interrupts
     * the releasing client thread, and the emulator may then interrupt this hook's thread too — answering
     * "not yet" at that moment would let exactly that close() pass the test.
     */
    private static boolean awaitQuietly(CountDownLatch latch, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return latch.getCount() == 0;
                }
                try {
                    return latch.await(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
