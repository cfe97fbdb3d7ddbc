package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.TestRestTemplate;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureTestRestTemplate;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** With gcslock.endpoint.force-release-enabled=true an administrator can free a lock held by another instance. */
@SpringBootTest(classes = ActuatorTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "gcslock.ttl=2s", "gcslock.refresh-interval=200ms", "gcslock.endpoint.force-release-enabled=true",
        "management.endpoints.web.exposure.include=gcslocks"})
@AutoConfigureTestRestTemplate
class ForceReleaseEndpointTest {

    static final String BUCKET = SharedEmulator.newBucket();

    @DynamicPropertySource
    static void gcs(DynamicPropertyRegistry r) {
        SharedEmulator.register(r, BUCKET);
    }

    @Autowired
    TestRestTemplate http;

    @Test
    @SuppressWarnings("rawtypes")
    void forceReleaseDeletesTheLockAndItsHolderFindsOut() {
        GcsLockRegistry other = SharedEmulator.otherInstance(BUCKET);
        try {
            Lease stuck = other.tryAcquire("stuck").orElseThrow();
            ResponseEntity<Map> response = http.exchange("/actuator/gcslocks/stuck", HttpMethod.DELETE, null, Map.class);
            assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
            assertThat(response.getBody()).containsEntry("released", true).containsEntry("owner", other.owner());
            assertThat(other.inspect("stuck")).isEmpty();
            await().atMost(Duration.ofSeconds(3)).until(() -> !stuck.isHealthy());
            assertThat(http.exchange("/actuator/gcslocks/stuck", HttpMethod.DELETE, null, Map.class).getStatusCode())
                    .isEqualTo(HttpStatus.NOT_FOUND);
        } finally {
            other.close();
        }
    }
}
