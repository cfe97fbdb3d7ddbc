package io.github.gcslock;

import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A thread interrupted while the GCS client waits to retry (shutdown while GCS is unreachable) gets a
 * StorageException, not the client's NullPointerException from StorageException.coalesce(null).
 */
class InterruptedGcsCallTest {

    /** Runs {@code call} on a thread, interrupts it while the client is retrying, returns what it threw. */
    private static Throwable interruptDuringRetries(Runnable call, AtomicBoolean interruptedAfter) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                call.run();
            } catch (Throwable e) {
                thrown.set(e);
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        t.start();
        started.await();
        Thread.sleep(700); // connection refused is retried with backoff for the whole operation timeout (3 s)
        t.interrupt();
        t.join(10_000);
        return thrown.get();
    }

    @Test
    void theClientsNullPointerExceptionBecomesAStorageExceptionAndTheInterruptIsKept() throws Exception {
        GcsEmulator gcs = GcsEmulator.start();
        Storage raw = gcs.storage();
        gcs.close(); // unreachable: every call is retried until interrupted
        Storage bounded = LockStore.boundedStorage(raw, Duration.ofSeconds(3));

        AtomicBoolean flag = new AtomicBoolean();
        Throwable e = interruptDuringRetries(() -> bounded.get("locks"), flag);
        assertThat(e).isInstanceOf(StorageException.class).hasMessageContaining("interrupted while the GCS client waited to retry get");
        assertThat(flag).as("interrupt flag kept").isTrue();

        // The registry's own calls: tryAcquire reports "unknown whether the lock is free", never an NPE.
        GcsLockRegistry registry = GcsLockRegistry.builder(raw, "locks").verifyBucket(false).ttl(Duration.ofSeconds(9)).build();
        try {
            Throwable acquire = interruptDuringRetries(() -> registry.tryAcquire("job"), new AtomicBoolean());
            assertThat(acquire).isInstanceOf(GcsLockException.class).isNotInstanceOf(NullPointerException.class);
        } finally {
            registry.close();
        }
    }

    /**
     * Rule 15: an interrupt that cuts a one-shot short (here while the client waits to retry a create that GCS
     * answered 503) is reported as an interrupt, with the flag set again: a GcsLockException whose cause is an
     * InterruptedException, not "could not reach GCS" (GCS answered; the caller stopped asking).
     */
    @Test
    void anInterruptedOneShotIsReportedAsAnInterruptNotAsAnOutage() throws Exception {
        GcsEmulator gcs = GcsEmulator.start();
        try {
            gcs.createBucket("locks");
            GcsLockRegistry registry = GcsLockRegistry.builder(gcs.storage(), "locks").ttl(Duration.ofSeconds(9))
                    .operationTimeout(Duration.ofSeconds(3)).build();
            try {
                gcs.faults().failNext(1_000_000, 503, Operation.INSERT);
                AtomicBoolean flag = new AtomicBoolean();
                Throwable e = interruptDuringRetries(() -> registry.tryAcquire("job"), flag);
                assertThat(e).isInstanceOf(GcsLockException.class).hasMessageContaining("interrupted while asking GCS for lock 'job'")
                        .hasMessageNotContaining("could not reach GCS").hasCauseInstanceOf(InterruptedException.class);
                assertThat(((GcsLockException) e).lockName()).isEqualTo("job");
                assertThat(flag).as("the interrupt flag is set again").isTrue();
            } finally {
                registry.close();
            }
        } finally {
            gcs.close();
        }
    }
}
