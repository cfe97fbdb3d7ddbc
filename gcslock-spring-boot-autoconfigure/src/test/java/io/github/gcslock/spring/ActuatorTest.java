package io.github.gcslock.spring;

import com.google.cloud.storage.BlobId;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.test.Operation;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.resttestclient.TestRestTemplate;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureTestRestTemplate;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** /actuator/health (gcsLock), /actuator/gcslocks, and the meters, over HTTP. */
@SpringBootTest(classes = ActuatorTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=200ms",
        "management.endpoints.web.exposure.include=health,gcslocks,metrics",
        "management.endpoint.health.show-details=always"})
@AutoConfigureTestRestTemplate
class ActuatorTest {

    static final String BUCKET = SharedEmulator.newBucket();

    @DynamicPropertySource
    static void gcs(DynamicPropertyRegistry r) {
        SharedEmulator.register(r, BUCKET);
    }

    @Autowired
    TestRestTemplate http;
    @Autowired
    LockRegistry locks;
    @Autowired
    MeterRegistry meters;

    @AfterEach
    void releaseAll() {
        locks.heldLeases().forEach(Lease::release);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> gcsLockHealth(ResponseEntity<Map> response) {
        return (Map<String, Object>) ((Map<String, Object>) response.getBody().get("components")).get("gcsLock");
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void healthIsUpWithHeldLockDetailsAndMakesNoGcsRequest() {
        Lease lease = locks.tryAcquire("nightly-report").orElseThrow();
        SharedEmulator.GCS.faults().resetCounters();
        ResponseEntity<Map> response = http.getForEntity("/actuator/health", Map.class);
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
        Map<String, Object> gcsLock = gcsLockHealth(response);
        System.out.println("HEALTH held: " + gcsLock);
        assertThat(gcsLock.get("status")).isEqualTo("UP");
        Map<String, Object> details = (Map<String, Object>) gcsLock.get("details");
        assertThat(details.get("held")).isEqualTo(1);
        Map<String, Object> first = ((List<Map<String, Object>>) details.get("locks")).get(0);
        assertThat(first).containsEntry("name", "nightly-report").containsEntry("healthy", true)
                .containsKeys("acquiredAt", "lastRefresh", "expires");
        assertThat(((Number) first.get("fencingToken")).longValue()).isEqualTo(lease.fencingToken());
        long objectRequests = SharedEmulator.GCS.faults().objectRequests() - SharedEmulator.GCS.faults().requestCount(Operation.PATCH);
        assertThat(objectRequests).as("health made no GCS request (refreshes aside)").isZero();
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void healthIsDownWhileAHeldLeaseIsLost() {
        Lease lease = locks.tryAcquire("doomed").orElseThrow();
        SharedEmulator.GCS.storage().delete(BlobId.of(BUCKET, "gcslock/doomed"));
        await("the lease to be lost after its object was deleted")
                .atMost(Duration.ofSeconds(30)).until(() -> !lease.isHealthy());
        ResponseEntity<Map> response = http.getForEntity("/actuator/health", Map.class);
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        Map<String, Object> gcsLock = gcsLockHealth(response);
        System.out.println("HEALTH lost: " + gcsLock);
        assertThat(gcsLock.get("status")).isEqualTo("DOWN");
        Map<String, Object> details = (Map<String, Object>) gcsLock.get("details");
        assertThat((List<String>) details.get("lost")).singleElement().asString().contains("doomed").contains("deleted");
        lease.release();
        assertThat(http.getForEntity("/actuator/health", Map.class).getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(meters.get("gcslock.lost").counter().count()).isGreaterThanOrEqualTo(1);
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void healthStaysUpWhileALeaseIsBeingReleased() {
        // A normal release is not an outage: probed while the release's DELETE is in flight (after a 429,
        // real GCS makes that last about a second), health must not answer 503.
        Lease lease = locks.tryAcquire("short-job").orElseThrow();
        java.util.concurrent.atomic.AtomicReference<ResponseEntity<Map>> duringRelease = new java.util.concurrent.atomic.AtomicReference<>();
        SharedEmulator.GCS.faults().beforeNext(Operation.DELETE,
                () -> duringRelease.set(http.getForEntity("/actuator/health", Map.class)));
        lease.release();
        assertThat(duringRelease.get()).as("health was probed during the DELETE").isNotNull();
        assertThat(duringRelease.get().getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(gcsLockHealth(duringRelease.get()).get("status")).isEqualTo("UP");
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void endpointListsAndInspectsLocks() {
        GcsLockRegistry other = SharedEmulator.otherInstance(BUCKET);
        try {
            other.tryAcquire("tenants/acme").orElseThrow();
            ResponseEntity<Map> list = http.getForEntity("/actuator/gcslocks", Map.class);
            assertThat(list.getStatusCode()).isEqualTo(HttpStatus.OK);
            List<Map<String, Object>> items = (List<Map<String, Object>>) list.getBody().get("locks");
            assertThat(items).anySatisfy(i -> {
                assertThat(i).containsEntry("name", "tenants/acme").containsEntry("owner", other.owner())
                        .containsEntry("stale", false);
            });
            ResponseEntity<Map> one = http.getForEntity("/actuator/gcslocks/tenants/acme", Map.class);
            assertThat(one.getStatusCode()).isEqualTo(HttpStatus.OK);
            assertThat(one.getBody()).containsEntry("owner", other.owner());
            assertThat(http.getForEntity("/actuator/gcslocks/nothing-here", Map.class).getStatusCode())
                    .isEqualTo(HttpStatus.NOT_FOUND);
        } finally {
            other.close();
        }
    }

    @Test
    @SuppressWarnings({"rawtypes"})
    void forceReleaseIsRefusedUnlessEnabled() {
        Lease lease = locks.tryAcquire("protected").orElseThrow();
        ResponseEntity<Map> response = http.exchange("/actuator/gcslocks/protected", HttpMethod.DELETE, null, Map.class);
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.FORBIDDEN);
        assertThat(response.getBody().get("error").toString()).contains("gcslock.endpoint.force-release-enabled=true");
        assertThat(lease.isHealthy()).isTrue();
        assertThat(locks.inspect("protected")).isPresent();
    }

    @Test
    void metersCountAcquisitions() {
        long before = meters.find("gcslock.acquire").tag("outcome", "acquired").timer() == null ? 0
                : meters.get("gcslock.acquire").tag("outcome", "acquired").timer().count();
        locks.tryAcquire("metered").orElseThrow().release();
        assertThat(meters.get("gcslock.acquire").tag("outcome", "acquired").timer().count()).isEqualTo(before + 1);
        await("a lease of 'refreshing' to count a successful refresh in the meters")
                .atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            Lease l = locks.tryAcquire("refreshing").orElseThrow();
            try {
                await("a successful refresh to be counted in gcslock.refresh")
                        .atMost(Duration.ofSeconds(30)).until(() ->
                        meters.get("gcslock.refresh").tag("outcome", "success").counter().count() > 0);
            } finally {
                l.release();
            }
        });
        assertThat(meters.get("gcslock.held").gauge()).isNotNull();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }
}
