package io.github.gcslock.sample;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.test.GcsEmulatorExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test example of README.md ("Testing your own code"), kept compiling and passing here. Only the
 * first property differs: the sample itself defaults to the embedded emulator.
 */
@SpringBootTest(properties = "gcslock.emulator.embedded=false")
class ReadmeExampleTest {

    @RegisterExtension
    static GcsEmulatorExtension gcs = new GcsEmulatorExtension("my-app-locks");

    @DynamicPropertySource
    static void gcs(DynamicPropertyRegistry registry) {
        registry.add("gcslock.emulator.endpoint", gcs::endpoint); // no credentials needed
        registry.add("gcslock.bucket", () -> "my-app-locks");
    }

    @Autowired ReportJob job;

    @Test
    void doesNotRunWhileAnotherInstanceHoldsTheLock() throws InterruptedException {
        int before;
        // another instance of the service, on the same bucket
        try (GcsLockRegistry other = GcsLockRegistry.builder(gcs.storage(), "my-app-locks").build()) {
            Lease held = other.acquire("nightly-report", Duration.ofSeconds(30));
            // count from here: a @Scheduled run that held the lock before has counted itself by now
            before = job.runs();
            job.nightlyReport();                         // skipped: the lock is held elsewhere
            assertThat(job.runs()).isEqualTo(before);
            held.release();
        }
        job.nightlyReport();
        assertThat(job.runs()).isGreaterThan(before);
    }
}
