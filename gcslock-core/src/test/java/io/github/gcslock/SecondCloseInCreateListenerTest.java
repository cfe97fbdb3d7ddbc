package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule 14: a second close() on a thread whose own create is in flight (a listener of that create's request) returns
 * without waiting for the first close(), which waits for that very create: it cannot end while the second one waits,
 * and both sat out the first one's bound (8 operation timeouts + 4 write windows). Found by an independent review of
 * 19e94d4.
 */
class SecondCloseInCreateListenerTest extends EmulatorTestBase {

    @Test
    void aCloseByTheCreatesListenerWhileAnotherCloseWaitsForThatCreateDoesNotHangForTheBound() throws Exception {
        // close()'s bound: 8 x 5 s + 4 x 20 ms = 40 s
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2))
                .operationTimeout(Duration.ofSeconds(5)));
        AtomicReference<Thread> acquiringThread = new AtomicReference<>();
        CountDownLatch listenerClosed = new CountDownLatch(1);
        r.addListener(new LockEventListener() {
            @Override
            public void requestAnswered(String name) {
                if ("job".equals(name) && Thread.currentThread() == acquiringThread.get()) {
                    r.close();
                    listenerClosed.countDown();
                }
            }
        });
        CountDownLatch createArrived = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.INSERT, () -> {
            createArrived.countDown();
            await(letGo);
        });
        try {
            CompletableFuture<Object> acquiring = CompletableFuture.supplyAsync(() -> {
                acquiringThread.set(Thread.currentThread());
                try {
                    return r.tryAcquire("job");
                } catch (Throwable e) {
                    return e;
                }
            });
            assertThat(createArrived.await(20, TimeUnit.SECONDS)).as("the create arrived").isTrue();
            CompletableFuture<Void> closing = CompletableFuture.runAsync(r::close);
            sleep(500); // close() now waits for the create in flight
            assertThat(closing).as("close() while the create is in flight").isNotDone();
            long t0 = System.nanoTime();
            letGo.countDown();
            boolean ended = listenerClosed.await(20, TimeUnit.SECONDS); // half the bound: far above the ms it should take
            long ms = (System.nanoTime() - t0) / 1_000_000;
            closing.get(60, TimeUnit.SECONDS);
            Object outcome = acquiring.get(30, TimeUnit.SECONDS);
            assertThat(ended).as("the listener's close() returned within 20 s of the create's answer (took %d ms); call outcome %s",
                    ms, outcome).isTrue();
            assertThat(object("job")).isNull();
        } finally {
            letGo.countDown();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
