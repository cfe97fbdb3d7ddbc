package io.github.gcslock.test;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** objects.rewrite (copy) and objects.compose through the real client. */
class CopyAndComposeTest extends EmulatorTestBase {

    @BeforeEach
    void createOtherBucket() {
        gcs.createBucket("other");
    }

    private Blob put(String name, String content) {
        return storage.create(BlobInfo.newBuilder(BUCKET, name).setContentType("text/plain").setMetadata(Map.of("k", name)).build(),
                content.getBytes(StandardCharsets.UTF_8));
    }

    private String read(String bucket, String name) {
        return new String(storage.readAllBytes(BlobId.of(bucket, name)), StandardCharsets.UTF_8);
    }

    @Test
    void copyMakesANewObjectWithTheSourcesContentAndMetadata() {
        Blob src = put("src", "copy me");
        Blob copy = storage.copy(Storage.CopyRequest.of(src.getBlobId(), BlobId.of("other", "dst"))).getResult();
        assertThat(copy.getBlobId().getName()).isEqualTo("dst");
        assertThat(copy.getGeneration()).isGreaterThan(src.getGeneration());
        assertThat(copy.getMetadata()).containsEntry("k", "src");
        assertThat(copy.getContentType()).isEqualTo("text/plain");
        assertThat(copy.getCrc32c()).isEqualTo(src.getCrc32c());
        assertThat(read("other", "dst")).isEqualTo("copy me");
        assertThat(read(BUCKET, "src")).as("the source stays").isEqualTo("copy me");
    }

    @Test
    void copyWithNewTargetMetadataUsesIt() {
        Blob src = put("src", "x");
        Blob copy = src.copyTo(BlobId.of(BUCKET, "renamed")).getResult();
        assertThat(copy.getMetadata()).containsEntry("k", "src");
        Blob withMeta = storage.copy(Storage.CopyRequest.newBuilder().setSource(src.getBlobId())
                .setTarget(BlobInfo.newBuilder(BUCKET, "meta").setMetadata(Map.of("new", "1")).build()).build()).getResult();
        assertThat(withMeta.getMetadata()).containsEntry("new", "1").doesNotContainKey("k");
    }

    @Test
    void copyHonoursTargetAndSourcePreconditions() {
        Blob src = put("src", "x");
        put("taken", "y");
        assertThatThrownBy(() -> storage.copy(Storage.CopyRequest.newBuilder().setSource(src.getBlobId())
                .setTarget(BlobInfo.newBuilder(BUCKET, "taken").build(), Storage.BlobTargetOption.doesNotExist()).build()).getResult())
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThat(read(BUCKET, "taken")).isEqualTo("y");
        assertThatThrownBy(() -> storage.copy(Storage.CopyRequest.newBuilder().setSource(src.getBlobId())
                .setSourceOptions(Storage.BlobSourceOption.generationMatch(src.getGeneration() + 1))
                .setTarget(BlobId.of(BUCKET, "new")).build()).getResult())
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThatThrownBy(() -> storage.copy(Storage.CopyRequest.of(BlobId.of(BUCKET, "missing"), BlobId.of(BUCKET, "new"))).getResult())
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(404));
        assertThat(storage.get(BlobId.of(BUCKET, "new"))).isNull();
    }

    @Test
    void composeConcatenatesSourcesAndReportsComponentsWithoutMd5() {
        put("p1", "hello, ");
        put("p2", "composed ");
        put("p3", "world");
        Blob composed = storage.compose(Storage.ComposeRequest.newBuilder().addSource("p1", "p2", "p3")
                .setTarget(BlobInfo.newBuilder(BUCKET, "all").setContentType("text/plain").build()).build());
        byte[] expected = "hello, composed world".getBytes(StandardCharsets.UTF_8);
        assertThat(read(BUCKET, "all")).isEqualTo("hello, composed world");
        assertThat(composed.getComponentCount()).isEqualTo(3);
        assertThat(composed.getCrc32c()).isEqualTo(crc32c(expected));
        assertThat(composed.getMd5()).as("GCS gives composite objects no MD5").isNull();
        assertThat(composed.getContentType()).isEqualTo("text/plain");

        Blob twice = storage.compose(Storage.ComposeRequest.newBuilder().addSource("all", "p3")
                .setTarget(BlobInfo.newBuilder(BUCKET, "twice").build()).build());
        assertThat(twice.getComponentCount()).as("components of a composite count").isEqualTo(4);
    }

    @Test
    void composeChecksSourceGenerationsDestinationPreconditionsAndLimits() {
        Blob p1 = put("p1", "a");
        put("p2", "b");
        assertThatThrownBy(() -> storage.compose(Storage.ComposeRequest.newBuilder().addSource("p1", p1.getGeneration() + 1)
                .addSource("p2").setTarget(BlobInfo.newBuilder(BUCKET, "x").build()).build()))
                .as("a source generation that is not the live one")
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(404));
        Blob ok = storage.compose(Storage.ComposeRequest.newBuilder().addSource("p1", p1.getGeneration())
                .addSource("p2").setTarget(BlobInfo.newBuilder(BUCKET, "ab").build()).build());
        assertThat(read(BUCKET, "ab")).isEqualTo("ab");
        assertThat(ok.getComponentCount()).isEqualTo(2);
        assertThatThrownBy(() -> storage.compose(Storage.ComposeRequest.newBuilder().addSource("p1", "missing")
                .setTarget(BlobInfo.newBuilder(BUCKET, "x").build()).build()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(404));
        assertThatThrownBy(() -> storage.compose(Storage.ComposeRequest.newBuilder().addSource("p1", "p2")
                .setTarget(BlobInfo.newBuilder(BUCKET, "p1").build()).setTargetOptions(Storage.BlobTargetOption.doesNotExist()).build()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        HttpResponse<byte[]> raw = RawHttp.send("POST", gcs.endpoint() + "/storage/v1/b/" + BUCKET + "/o/x/compose",
                ("{\"sourceObjects\":[{\"name\":\"p1\",\"objectPreconditions\":{\"ifGenerationMatch\":\""
                        + (p1.getGeneration() + 1) + "\"}}],\"destination\":{}}").getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json"));
        assertThat(raw.statusCode()).as("a source's ifGenerationMatch").isEqualTo(412);
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 33; i++) {
            many.add("p1");
        }
        assertThatThrownBy(() -> storage.compose(Storage.ComposeRequest.newBuilder().addSource(many)
                .setTarget(BlobInfo.newBuilder(BUCKET, "x").build()).build()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(400));
        assertThat(storage.get(BlobId.of(BUCKET, "x"))).isNull();
    }
}
