package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The skip line says who holds the lock: another thread of this process, or another instance. */
@ExtendWith(OutputCaptureExtension.class)
class SkipLogTest {

    static final String BUCKET = SharedEmulator.newBucket();

    static class Jobs {
        private int runs;

        public int runs() {
            return runs;
        }

        @GcsLocked("held-here")
        public void heldHere() {
            runs++;
        }

        @GcsLocked("held-elsewhere")
        public void heldElsewhere() {
            runs++;
        }
    }

    @Test
    void theSkipLineSaysWhetherThisProcessOrAnotherInstanceHoldsTheLock(CapturedOutput output) {
        SharedEmulator.runner(BUCKET).withBean(Jobs.class).run(ctx -> {
            Jobs jobs = ctx.getBean(Jobs.class);
            LockRegistry locks = ctx.getBean(LockRegistry.class);
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            CompletableFuture<Void> otherThread = CompletableFuture.runAsync(() -> {
                try (Lease lease = locks.tryAcquire("held-here").orElseThrow()) {
                    holding.countDown();
                    done.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            jobs.heldHere();
            done.countDown();
            otherThread.join();

            try (GcsLockRegistry other = SharedEmulator.holdingInstance(BUCKET)) {
                Lease held = other.tryAcquire("held-elsewhere").orElseThrow();
                jobs.heldElsewhere();
                held.release();
            }
            assertThat(jobs.runs()).isZero();
            assertThat(output.getAll())
                    .contains("@GcsLocked Jobs.heldHere(..): lock 'held-here' is held by another thread or call "
                            + "of this process, so this run is skipped")
                    .contains("@GcsLocked Jobs.heldElsewhere(..): lock 'held-elsewhere' is held by another "
                            + "instance, so this run is skipped");
        });
    }
}
