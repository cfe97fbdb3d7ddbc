package io.github.gcslock.spring;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.TestRestTemplate;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureTestRestTemplate;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With gcslock.endpoint.force-release-enabled=true an administrator can free a lock held by another
 * instance — only the acquisition they saw (its fencing token), and only gcslock's own lock objects.
 */
@SpringBootTest(classes = ActuatorTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=200ms", "gcslock.endpoint.force-release-enabled=true",
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
    @LocalServerPort
    int port;

    private final GcsLockRegistry other = SharedEmulator.otherInstance(BUCKET);

    @AfterEach
    void closeOther() {
        other.close();
    }

    @SuppressWarnings("rawtypes")
    private ResponseEntity<Map> delete(String path) {
        return http.exchange(path, HttpMethod.DELETE, null, Map.class);
    }

    /** Sends the path as written (no client-side encoding), as curl would. */
    private HttpResponse<String> raw(String method, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    @Test
    @SuppressWarnings("rawtypes")
    void forceReleaseDeletesTheLockAndItsHolderFindsOut() {
        Lease stuck = other.tryAcquire("stuck").orElseThrow();
        ResponseEntity<Map> response = delete("/actuator/gcslocks/stuck?fencingToken=" + stuck.fencingToken());
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(response.getBody()).containsEntry("released", true).containsEntry("owner", other.owner());
        assertThat(other.inspect("stuck")).isEmpty();
        await("the holder's lease to be lost after the force release")
                .atMost(Duration.ofSeconds(30)).until(() -> !stuck.isHealthy());
        assertThat(delete("/actuator/gcslocks/stuck?fencingToken=" + stuck.fencingToken()).getStatusCode())
                .isEqualTo(HttpStatus.NOT_FOUND);
    }

    @Test
    @SuppressWarnings("rawtypes")
    void withoutTheFencingTokenTheDeleteIsRefusedWith400() {
        Lease held = other.tryAcquire("unseen").orElseThrow();
        ResponseEntity<Map> response = delete("/actuator/gcslocks/unseen");
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(response.getBody().get("error").toString()).contains("fencingToken is required");
        assertThat(delete("/actuator/gcslocks/unseen?fencingToken=soon").getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(other.inspect("unseen")).isPresent();
        assertThat(held.isHealthy()).isTrue();
    }

    @Test
    @SuppressWarnings("rawtypes")
    void aLockThatChangedHandsSinceTheAdministratorReadItIsNotDeleted() {
        long seen = other.tryAcquire("handover").orElseThrow().fencingToken();
        other.heldLeases().forEach(Lease::release);
        // Another acquisition of the same name (here the same instance again; any healthy holder).
        Lease newHolder = await("a new acquisition of 'handover'")
                .atMost(Duration.ofSeconds(30)).until(() -> other.tryAcquire("handover").orElse(null),
                l -> l != null);
        assertThat(newHolder.fencingToken()).isNotEqualTo(seen);
        ResponseEntity<Map> response = delete("/actuator/gcslocks/handover?fencingToken=" + seen);
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(response.getBody().get("error").toString()).contains("changed hands");
        assertThat(other.inspect("handover").orElseThrow().fencingToken()).isEqualTo(newHolder.fencingToken());
        assertThat(newHolder.isHealthy()).isTrue();
    }

    @Test
    @SuppressWarnings("rawtypes")
    void withAMetagenerationALockRefreshedSinceItWasReadIsNotDeleted() {
        Lease held = other.tryAcquire("refreshed").orElseThrow();
        LockInfo seen = other.inspect("refreshed").orElseThrow();
        await("the held lease to be refreshed since it was read").atMost(Duration.ofSeconds(30)).until(() ->
                other.inspect("refreshed").orElseThrow().metageneration() > seen.metageneration());
        ResponseEntity<Map> stale = delete("/actuator/gcslocks/refreshed?fencingToken=" + seen.fencingToken()
                + "&metageneration=" + seen.metageneration());
        assertThat(stale.getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(stale.getBody().get("error").toString()).contains("refreshed since you read it");
        assertThat(held.isHealthy()).isTrue();
        // Without the metageneration, the acquisition the caller saw is enough (a refresh is not a new holder).
        assertThat(delete("/actuator/gcslocks/refreshed?fencingToken=" + seen.fencingToken()).getStatusCode())
                .isEqualTo(HttpStatus.OK);
    }

    @Test
    @SuppressWarnings("rawtypes")
    void anObjectWithoutGcslockMetadataUnderThePrefixIsNeverDeleted() {
        Blob foreign = SharedEmulator.GCS.storage().create(BlobInfo.newBuilder(BlobId.of(BUCKET, "gcslock/not-a-lock")).build(),
                "someone's data".getBytes(StandardCharsets.UTF_8));
        ResponseEntity<Map> response = delete("/actuator/gcslocks/not-a-lock?fencingToken=" + foreign.getGeneration());
        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(response.getBody().get("error").toString()).contains("no gcslock metadata");
        assertThat(SharedEmulator.GCS.storage().get(BlobId.of(BUCKET, "gcslock/not-a-lock"))).isNotNull();
    }

    @Test
    void anInvalidNameInThePathIs400Not500() throws Exception {
        for (String path : new String[]{"/actuator/gcslocks/a*b", "/actuator/gcslocks/a%5Bb"}) {
            HttpResponse<String> get = raw("GET", path);
            assertThat(get.statusCode()).as("GET " + path).isEqualTo(400);
            assertThat(get.body()).contains("not allowed");
            HttpResponse<String> delete = raw("DELETE", path + "?fencingToken=1");
            assertThat(delete.statusCode()).as("DELETE " + path).isEqualTo(400);
            assertThat(delete.body()).contains("not allowed");
        }
    }
}
