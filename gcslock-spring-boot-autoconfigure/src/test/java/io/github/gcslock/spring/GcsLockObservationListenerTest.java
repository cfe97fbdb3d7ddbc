package io.github.gcslock.spring;

import com.google.cloud.storage.BlobId;
import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockLostException;
import io.github.gcslock.LockNotAcquiredException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Observations of acquisitions and holds, on a real registry against the emulator, seen by TestObservationRegistry. */
class GcsLockObservationListenerTest {

    private final String bucket = SharedEmulator.newBucket();
    private TestObservationRegistry observations;
    private MeterRegistry meters;
    private GcsLockRegistry registry;
    private GcsLockRegistry otherInstance;

    @BeforeEach
    void setUp() {
        observations = TestObservationRegistry.create();
        meters = new SimpleMeterRegistry();
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        registry = builder().listener(new GcsLockObservationListener(observations)).build();
        otherInstance = builder().listener(new GcsLockObservationListener(observations)).build();
    }

    private GcsLockRegistry.Builder builder() {
        return GcsLockRegistry.builder(SharedEmulator.GCS.storage(), bucket).ttl(Duration.ofSeconds(2))
                .refreshInterval(Duration.ofMillis(300)).operationTimeout(Duration.ofMillis(600))
                .writeRateWindow(Duration.ofMillis(20)).backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2);
    }

    @AfterEach
    void tearDown() {
        SharedEmulator.GCS.faults().reset();
        registry.close();
        otherInstance.close();
    }

    @Test
    void anAcquisitionAndItsHoldUntilRelease() {
        Lease lease = registry.tryAcquire("report").orElseThrow();
        assertThat(observations).hasNumberOfObservationsWithNameEqualTo("gcslock.acquisition", 1)
                .hasObservationWithNameEqualTo("gcslock.acquisition").that()
                .hasBeenStarted().hasBeenStopped()
                .hasLowCardinalityKeyValue("gcslock.outcome", "acquired")
                .hasLowCardinalityKeyValue("gcslock.mode", "try")
                .hasHighCardinalityKeyValue("gcslock.name", "report")
                .doesNotHaveLowCardinalityKeyValueWithKey("gcslock.name");
        // Hold events reach listeners off the caller's thread (in order per lock): wait for them.
        await("the hold observation of 'report' to start, on a listener thread")
                .atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(observations).hasObservationWithNameEqualTo("gcslock.hold").that()
                        .hasBeenStarted().isNotStopped()
                        .hasHighCardinalityKeyValue("gcslock.name", "report")
                        .hasHighCardinalityKeyValue("gcslock.fencing-token", Long.toString(lease.fencingToken())));

        Lease nested = registry.tryAcquire("report").orElseThrow(); // reentrant: neither acquisition nor hold
        nested.release();
        assertThat(observations).hasNumberOfObservationsWithNameEqualTo("gcslock.acquisition", 1)
                .hasNumberOfObservationsWithNameEqualTo("gcslock.hold", 1);

        lease.release();
        await("the hold observation of 'report' to end as released").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(observations).hasObservationWithNameEqualTo("gcslock.hold").that()
                        .hasBeenStopped().hasLowCardinalityKeyValue("gcslock.outcome", "released"));
        assertThat(meters.get("gcslock.hold").tag("gcslock.outcome", "released").timer().count()).isEqualTo(1);
    }

    @Test
    void busyAndTimeoutOutcomesAndTheWaitIsTheDuration() throws Exception {
        Lease held = registry.tryAcquire("report").orElseThrow();
        assertThat(otherInstance.tryAcquire("report")).isEmpty();
        assertThatThrownBy(() -> otherInstance.acquire("report", Duration.ofMillis(300)))
                .isInstanceOf(LockNotAcquiredException.class);
        held.release();

        assertThat(observations).hasAnObservation(o -> o.hasNameEqualTo("gcslock.acquisition")
                .hasLowCardinalityKeyValue("gcslock.outcome", "busy").hasLowCardinalityKeyValue("gcslock.mode", "try"));
        assertThat(observations).hasAnObservation(o -> o.hasNameEqualTo("gcslock.acquisition")
                .hasLowCardinalityKeyValue("gcslock.outcome", "timeout").hasLowCardinalityKeyValue("gcslock.mode", "wait"));
        Timer timeout = meters.get("gcslock.acquisition").tag("gcslock.outcome", "timeout").timer();
        assertThat(timeout.count()).isEqualTo(1);
        assertThat(timeout.totalTime(TimeUnit.MILLISECONDS)).as("the observation spans the whole wait").isGreaterThanOrEqualTo(300);
    }

    @Test
    void errorOutcomeWhenGcsCannotBeAsked() throws InterruptedException {
        SharedEmulator.GCS.faults().failNext(100, 503);
        assertThatThrownBy(() -> registry.tryAcquire("report")).isInstanceOf(GcsLockException.class);
        SharedEmulator.GCS.faults().reset();
        assertThat(observations).hasObservationWithNameEqualTo("gcslock.acquisition").that()
                .hasBeenStopped().hasLowCardinalityKeyValue("gcslock.outcome", "error");
        Thread.sleep(200); // hold events are dispatched off this thread: give a wrong one time to show up
        assertThat(observations).hasNumberOfObservationsWithNameEqualTo("gcslock.hold", 0);
    }

    @Test
    void badInputIsAnErrorObservationWithoutWait() {
        assertThatThrownBy(() -> registry.tryAcquire("bad#name")).isInstanceOf(IllegalArgumentException.class);
        assertThat(observations).hasObservationWithNameEqualTo("gcslock.acquisition").that()
                .hasBeenStopped().hasLowCardinalityKeyValue("gcslock.outcome", "error")
                .hasLowCardinalityKeyValue("gcslock.mode", "unknown");
    }

    @Test
    void aLostHoldEndsAsLostWithTheLossAsItsError() {
        Lease lease = registry.tryAcquire("report").orElseThrow();
        SharedEmulator.GCS.storage().delete(BlobId.of(bucket, "gcslock/report")); // an administrator deletes it
        await("the lease to be lost after its object was deleted")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        await("the hold observation of 'report' to end as lost").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(observations).hasObservationWithNameEqualTo("gcslock.hold").that()
                        .hasBeenStopped().hasLowCardinalityKeyValue("gcslock.outcome", "lost")
                        .assertThatError().isInstanceOf(LockLostException.class));
        lease.release();
        assertThat(observations).hasNumberOfObservationsWithNameEqualTo("gcslock.hold", 1);
    }

    @Test
    void anObservationCurrentOnTheCallingThreadIsTheParent() {
        Observation job = Observation.start("job", observations);
        try (Observation.Scope scope = job.openScope()) {
            registry.tryAcquire("report").orElseThrow().release();
        } finally {
            job.stop();
        }
        assertThat(observations).hasObservationWithNameEqualTo("gcslock.acquisition").that()
                .hasParentObservationEqualTo(job);
    }
}
