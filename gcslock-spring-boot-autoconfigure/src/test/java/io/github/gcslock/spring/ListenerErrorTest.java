package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.LockRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An {@link Error} thrown by an application's {@code ApplicationListener<GcsLockAcquiredEvent>} while a
 * lease is handed out: the call fails, and the lock is released, not left held and refreshed for the
 * life of the process by a thread whose call failed.
 */
class ListenerErrorTest {

    private static final String BUCKET = SharedEmulator.newBucket();

    private final GcsLockRegistry other = SharedEmulator.holdingInstance(BUCKET);

    @AfterEach
    void closeOther() {
        other.close();
    }

    static class ListenerError extends Error {
        ListenerError() {
            super("listener failed hard");
        }
    }

    /** Throws an Error for the lock named "doomed". */
    static class FailingAcquiredListener implements ApplicationListener<GcsLockAcquiredEvent> {
        @Override
        public void onApplicationEvent(GcsLockAcquiredEvent event) {
            if (event.lockName().startsWith("doomed")) {
                throw new ListenerError();
            }
        }
    }

    public static class Job {
        final AtomicInteger runs = new AtomicInteger();

        @GcsLocked("doomed-job")
        public void run() {
            runs.incrementAndGet();
        }

        public int runs() {
            return runs.get();
        }
    }

    private ApplicationContextRunner runner() {
        return SharedEmulator.runner(BUCKET).withPropertyValues("gcslock.ttl=60s")
                .withBean(FailingAcquiredListener.class).withBean(Job.class);
    }

    @Test
    void anErrorFromAnAcquiredEventListenerReleasesTheLock() {
        runner().run(ctx -> {
            LockRegistry locks = ctx.getBean(LockRegistry.class);
            assertThatThrownBy(() -> locks.tryAcquire("doomed")).isInstanceOf(ListenerError.class);
            assertThat(locks.heldLeases()).as("no lease left held").isEmpty();
            assertThat(other.tryAcquire("doomed")).as("the lock object was deleted").isPresent();
        });
    }

    @Test
    void anErrorFromAnAcquiredEventListenerOfAGcsLockedMethodReleasesTheLockAndTheMethodDoesNotRun() {
        runner().run(ctx -> {
            Job job = ctx.getBean(Job.class);
            assertThatThrownBy(job::run).isInstanceOf(ListenerError.class);
            assertThat(job.runs()).isZero();
            assertThat(ctx.getBean(LockRegistry.class).heldLeases()).isEmpty();
            assertThat(other.tryAcquire("doomed-job")).isPresent();
        });
    }
}
