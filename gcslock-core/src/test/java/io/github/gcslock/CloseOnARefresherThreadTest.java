package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * close() called on a refresher thread, by the application's GCS transport inside a refresh's PATCH (rules 14 and 20).
 * Found by {@code EngineInterleavingExplorerTest} alone ({@code closeRacingReleasesInFlight}, once it closed a registry
 * inside a PATCH sent under a lease's I/O lock): close() releases that very lease on this thread, so the refresh's outcome
 * comes after the lease's {@code released}; and close() stopped the refresher with {@code shutdownNow}, interrupting the
 * refresher's other running tasks (a hold-at-least release deleting its object), which close() must let end.
 */
class CloseOnARefresherThreadTest extends EmulatorTestBase {

    /**
     * The refresh's PATCH fails (503 through the client's retries) after close(), on its own thread inside that PATCH,
     * released the lease: no {@code refreshFailed} may follow the lease's {@code released} (rule 20).
     */
    @Test
    void aRefreshWhoseLeaseCloseReleasedInsideItsPatchTellsNoRefreshFailedAfterReleased() throws Exception {
        AtomicReference<GcsLockRegistry> registry = new AtomicReference<>();
        AtomicBoolean armed = new AtomicBoolean();
        CountDownLatch closedInside = new CountDownLatch(1);
        HookedTransport transport = new HookedTransport();
        transport.hook = (method, url) -> {
            if (HookedTransport.isPatchOf("job", method, url) && Thread.currentThread().getName().startsWith("gcslock-refresh-")
                    && armed.compareAndSet(true, false)) {
                registry.get().close(); // releases job on this thread (its I/O lock is this refresh's, reentrant)
                gcs.faults().failNext(10, 503, Operation.PATCH); // then the PATCH itself fails
                closedInside.countDown();
            }
        };
        List<String> events = new CopyOnWriteArrayList<>();
        GcsLockRegistry r = GcsLockRegistry.builder(transport.client(gcs), BUCKET).ttl(Duration.ofSeconds(6))
                .refreshInterval(Duration.ofMillis(500)).operationTimeout(Duration.ofSeconds(1))
                .writeRateWindow(Duration.ofMillis(20)).backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0)
                .verifyBucket(false).listener(new LockEventListener() {
                    @Override public void released(Lease lease) {
                        events.add("released");
                    }

                    @Override public void refreshFailed(Lease lease, Exception error) {
                        events.add("refreshFailed");
                    }

                    @Override public void refreshed(Lease lease) {
                        events.add("refreshed");
                    }
                }).build();
        registry.set(r);
        try {
            r.tryAcquire("job").orElseThrow();
            armed.set(true);
            assertThat(closedInside.await(20, TimeUnit.SECONDS)).as("close() ran inside a refresh's PATCH").isTrue();
            Thread.sleep(1_500); // the PATCH's retries end within the operation timeout; its events are told after
            assertThat(events).as("events of job").contains("released");
            assertThat(events.subList(events.indexOf("released"), events.size())).as("events from released on")
                    .containsExactly("released");
            assertThat(object("job")).isNull();
        } finally {
            gcs.faults().reset();
            r.close();
        }
    }

    /**
     * close() on a refresher thread (inside a refresh's PATCH of one lease) while another refresher thread runs a
     * hold-at-least release of another lease, its DELETE on the transport: close() must not interrupt it (rule 14).
     */
    @Test
    void aCloseOnARefresherThreadDoesNotInterruptTheRefreshersOtherRunningRelease() throws Exception {
        AtomicReference<GcsLockRegistry> registry = new AtomicReference<>();
        AtomicBoolean armedPatch = new AtomicBoolean();
        AtomicBoolean armedDelete = new AtomicBoolean(true);
        CountDownLatch deleteOnItsWay = new CountDownLatch(1);
        CountDownLatch closeReturned = new CountDownLatch(1);
        AtomicBoolean deleteInterrupted = new AtomicBoolean();
        HookedTransport transport = new HookedTransport();
        transport.hook = (method, url) -> {
            String thread = Thread.currentThread().getName();
            if (method.equals("DELETE") && url.contains("/o/gcslock%2Fother") && thread.startsWith("gcslock-refresh-")
                    && armedDelete.compareAndSet(true, false)) {
                deleteOnItsWay.countDown();
                try {
                    Thread.sleep(2_000); // the hold-at-least release's DELETE, on its way while close() runs
                } catch (InterruptedException e) {
                    deleteInterrupted.set(true);
                    Thread.currentThread().interrupt();
                }
            } else if (HookedTransport.isPatchOf("job", method, url) && thread.startsWith("gcslock-refresh-") && armedPatch.get()
                    && deleteOnItsWay.getCount() == 0 && armedPatch.compareAndSet(true, false)) {
                registry.get().close();
                closeReturned.countDown();
            }
        };
        GcsLockRegistry r = GcsLockRegistry.builder(transport.client(gcs), BUCKET).ttl(Duration.ofSeconds(6))
                .refreshInterval(Duration.ofMillis(500)).operationTimeout(Duration.ofSeconds(2))
                .writeRateWindow(Duration.ofMillis(20)).backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0)
                .refresherThreads(4).verifyBucket(false).build();
        registry.set(r);
        try {
            r.tryAcquire("job").orElseThrow();
            Lease other = r.tryAcquire("other").orElseThrow();
            r.releaseAfter(other, Duration.ofMillis(100)); // runs on a refresher thread
            assertThat(deleteOnItsWay.await(20, TimeUnit.SECONDS)).as("the hold-at-least release's DELETE").isTrue();
            armedPatch.set(true);
            assertThat(closeReturned.await(20, TimeUnit.SECONDS)).as("close() ran inside a refresh's PATCH and returned").isTrue();
            assertThat(deleteInterrupted).as("the refresher's running release was interrupted by close()").isFalse();
        } finally {
            closeReturned.countDown();
            r.close();
        }
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> object("other") == null);
    }
}
