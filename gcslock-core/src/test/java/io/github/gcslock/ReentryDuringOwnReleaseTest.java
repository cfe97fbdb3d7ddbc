package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rule 17: an owner whose hold was given back on another thread (a future's completion, a listener, a release handed
 * off) holds nothing once that release began, even while its DELETE is still in flight and the name's slot still
 * names the owner. Its next call waits for that release like anyone's and gets a lease of its own; it is not a
 * reentrant call into a lost hold ("the enclosing hold of this owner is no longer healthy: released"). Found by
 * review 4 (its attacks A12, through a listener that gives back in acquireStarted a hold it took there, and A13).
 */
class ReentryDuringOwnReleaseTest extends EmulatorTestBase {

    @Test
    void theHoldingThreadAsksAgainWhileAnotherThreadReleasesItsHold() throws Exception {
        GcsLockRegistry r = registry();
        CountDownLatch deleteHeld = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        CompletableFuture<Lease> again = CompletableFuture.supplyAsync(() -> {
            try {
                Lease first = r.acquire("given-back", Duration.ZERO);
                gcs.faults().beforeNext(Operation.DELETE, () -> {
                    deleteHeld.countDown();
                    try {
                        letGo.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                CompletableFuture.runAsync(first::release); // given back on another thread
                assertThat(deleteHeld.await(20, TimeUnit.SECONDS)).isTrue();
                CompletableFuture.runAsync(() -> {
                    try {
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    letGo.countDown();
                });
                // the same thread, while that DELETE is in flight: it holds nothing, so it waits for the release
                return r.acquire("given-back", Duration.ofSeconds(10));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Lease lease;
        try {
            lease = again.get(60, TimeUnit.SECONDS);
        } finally {
            letGo.countDown();
        }
        assertThat(lease.isHealthy()).isTrue();
        assertThat(lease).isNotInstanceOf(ReentrantHold.class);
        lease.release();
        assertThat(object("given-back")).isNull();
    }
}
