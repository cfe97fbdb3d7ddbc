package io.github.gcslock.autoconfigure;

import com.google.api.gax.core.CredentialsProvider;
import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.cloud.NoCredentials;
import com.google.cloud.WriteChannel;
import com.google.cloud.spring.autoconfigure.core.GcpContextAutoConfiguration;
import com.google.cloud.spring.autoconfigure.storage.GcpStorageAutoConfiguration;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.Resource;
import org.springframework.core.io.WritableResource;

import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the README says about emulator mode: the application's Storage and CredentialsProvider beans are
 * replaced, so its own GCS code (writers, gs:// resources) goes to the emulator; a CredentialsProvider of
 * the application's own is kept for other GCP services while Storage stays on the emulator.
 */
class EmulatorModeAppWideTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture("files");

    private ApplicationContextRunner runner() {
        return gcs.runner(GcpContextAutoConfiguration.class, GcpStorageAutoConfiguration.class)
                .withPropertyValues("spring.cloud.gcp.project-id=test-project");
    }

    @Test
    void theApplicationsStorageAndGsResourcesGoToTheEmulator() {
        runner().run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(CredentialsProvider.class).getCredentials()).isSameAs(NoCredentials.getInstance());
            Storage storage = ctx.getBean(Storage.class);
            assertThat(storage.getOptions().getHost()).isEqualTo(gcs.endpoint());

            gcs.faults().resetCounters();
            try (WriteChannel w = storage.writer(BlobInfo.newBuilder("files", "report.csv").build())) {
                w.write(ByteBuffer.wrap("a,b\n".getBytes(StandardCharsets.UTF_8)));
            }
            assertThat(gcs.faults().requestCount(Operation.UPLOAD)).as("a resumable upload").isPositive();

            Resource resource = ctx.getResource("gs://files/from-resource.txt");
            assertThat(resource).isInstanceOf(WritableResource.class);
            try (OutputStream out = ((WritableResource) resource).getOutputStream()) {
                out.write("written through a gs:// resource".getBytes(StandardCharsets.UTF_8));
            }
            Storage direct = gcs.storage();
            assertThat(direct.readAllBytes(BlobId.of("files", "report.csv"))).asString(StandardCharsets.UTF_8).isEqualTo("a,b\n");
            assertThat(direct.readAllBytes(BlobId.of("files", "from-resource.txt"))).asString(StandardCharsets.UTF_8)
                    .isEqualTo("written through a gs:// resource");
            assertThat(new String(ctx.getResource("gs://files/from-resource.txt").getContentAsByteArray(), StandardCharsets.UTF_8))
                    .isEqualTo("written through a gs:// resource");
        });
    }

    @Test
    void anApplicationCredentialsProviderIsKeptForOtherServicesWhileStorageStaysOnTheEmulator() {
        runner().withUserConfiguration(OwnCredentials.class).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).hasSingleBean(CredentialsProvider.class);
            assertThat(ctx.getBean(CredentialsProvider.class).getCredentials()).isSameAs(OwnCredentials.CREDENTIALS);
            Storage storage = ctx.getBean(Storage.class);
            assertThat(storage.getOptions().getCredentials()).isSameAs(NoCredentials.getInstance());
            assertThat(storage.getOptions().getHost()).isEqualTo(gcs.endpoint());
            storage.create(BlobInfo.newBuilder("files", "with-own-credentials").build(), new byte[]{1});
            assertThat(gcs.storage().get(BlobId.of("files", "with-own-credentials"))).isNotNull();
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnCredentials {
        static final GoogleCredentials CREDENTIALS = GoogleCredentials.create(new AccessToken("not-a-real-token", null));

        @Bean
        CredentialsProvider applicationCredentials() {
            return () -> CREDENTIALS;
        }
    }
}
