package io.github.gcslock.sample;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.TestRestTemplate;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureTestRestTemplate;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The sample boots on the embedded emulator, with nothing else configured, and shows its locks. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"sample.migration.step=100ms", "sample.report.interval=200ms", "sample.report.hold-at-least=0s"})
@AutoConfigureTestRestTemplate
class SampleApplicationTest {

    @Autowired
    TestRestTemplate http;
    @Autowired
    ReportJob report;
    @Autowired
    FencedResultStore results;

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void healthShowsGcsLockUpWithTheHeldJobLock() {
        await("the health to show gcsLock UP with the held long-migration lock")
                .atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            ResponseEntity<Map> response = http.getForEntity("/actuator/health", Map.class);
            assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
            Map<String, Object> gcsLock = (Map<String, Object>) ((Map<String, Object>) response.getBody().get("components")).get("gcsLock");
            assertThat(gcsLock.get("status")).isEqualTo("UP");
            List<Map<String, Object>> locks = (List<Map<String, Object>>) ((Map<String, Object>) gcsLock.get("details")).get("locks");
            assertThat(locks).anySatisfy(l -> assertThat(l).containsEntry("name", "long-migration").containsEntry("healthy", true));
            System.out.println("SAMPLE HEALTH " + response.getBody());
        });
    }

    @Test
    void theScheduledReportRuns() {
        await("the scheduled report to run twice").atMost(Duration.ofSeconds(60)).until(() -> report.runs() >= 2);
    }

    @Test
    @SuppressWarnings({"rawtypes"})
    void invoiceEndpointWritesAFencedResult() {
        ResponseEntity<Map> closed = http.postForEntity("/tenants/acme/invoices/close", null, Map.class);
        assertThat(closed.getStatusCode()).isEqualTo(HttpStatus.OK);
        long token = ((Number) closed.getBody().get("fencingToken")).longValue();
        ResponseEntity<Map> stored = http.getForEntity("/tenants/acme/invoices", Map.class);
        assertThat(((Number) stored.getBody().get("fencingToken")).longValue()).isEqualTo(token);
    }

    @Test
    void theFencedWriteRejectsAStaleToken() {
        results.write("fenced-test", "from the newer holder", 200);
        assertThatThrownBy(() -> results.write("fenced-test", "from a paused old holder", 100))
                .isInstanceOf(FencedResultStore.StaleTokenException.class)
                .hasMessageContaining("fencing token 100 refused");
        assertThat(results.read("fenced-test")).containsEntry("content", "from the newer holder");
        results.write("fenced-test", "same holder again", 200);
    }
}
