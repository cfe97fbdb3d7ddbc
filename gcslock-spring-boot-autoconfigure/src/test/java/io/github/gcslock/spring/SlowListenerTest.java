package io.github.gcslock.spring;

import com.google.cloud.storage.BlobId;
import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationListener;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A slow {@code ApplicationListener<GcsLockLostEvent>} (an alert sent over HTTP) must not delay the
 * refreshes of any other lease: events are not delivered on the threads that refresh leases.
 */
class SlowListenerTest {

    private static final String BUCKET = SharedEmulator.newBucket();

    /** Blocks for a while on every lost event, like an alert over a slow network. */
    static class SlowAlert implements ApplicationListener<GcsLockLostEvent> {
        final CountDownLatch entered = new CountDownLatch(1);

        @Override
        public void onApplicationEvent(GcsLockLostEvent event) {
            entered.countDown();
            GcsLockedAspectTest.sleep(4000);
        }
    }

    @Test
    void aSlowLostEventListenerDoesNotStarveAnotherLeasesRefreshes() {
        SharedEmulator.runner(BUCKET).withPropertyValues("gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=200ms")
                .withBean(SlowAlert.class)
                .run(ctx -> {
                    LockRegistry locks = ctx.getBean(LockRegistry.class);
                    Lease untouched = locks.tryAcquire("untouched").orElseThrow();
                    // Two leases lost at about the same time: as many as the registry has refresh threads.
                    locks.tryAcquire("deleted-1").orElseThrow();
                    locks.tryAcquire("deleted-2").orElseThrow();
                    SharedEmulator.GCS.storage().delete(BlobId.of(BUCKET, "gcslock/deleted-1"));
                    SharedEmulator.GCS.storage().delete(BlobId.of(BUCKET, "gcslock/deleted-2"));
                    SlowAlert alert = ctx.getBean(SlowAlert.class);
                    assertThat(alert.entered.await(5, TimeUnit.SECONDS)).as("a lost event reached the listener").isTrue();
                    Instant before = untouched.lastRefreshAt();
                    // While the listener is still blocked, the untouched lease keeps being refreshed.
                    await("the untouched lease to be refreshed while the slow lost listener still runs")
                            .atMost(Duration.ofSeconds(3)).until(() -> untouched.lastRefreshAt().isAfter(before));
                    assertThat(untouched.isHealthy()).as("the untouched lease stays healthy").isTrue();
                    untouched.release();
                });
    }
}
