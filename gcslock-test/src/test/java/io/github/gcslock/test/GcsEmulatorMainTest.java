package io.github.gcslock.test;

import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The standalone emulator command: options, bind address, buckets, and what it prints. */
class GcsEmulatorMainTest {

    @Test
    void defaultsAreLoopbackPort4443AndBucketGcslock() {
        GcsEmulatorMain.Options o = GcsEmulatorMain.parse(new String[0]);
        assertThat(o.host()).isEqualTo("127.0.0.1");
        assertThat(o.port()).isEqualTo(4443);
        assertThat(o.buckets()).containsExactly("gcslock");
        assertThat(GcsEmulatorMain.parse(new String[]{"--help"})).isNull();
    }

    @Test
    void bucketIsRepeatableAndOptionsAreParsed() {
        GcsEmulatorMain.Options o = GcsEmulatorMain.parse(new String[]{"--port", "0", "--bucket", "locks", "--bucket", "files",
                "--host", "0.0.0.0", "--write-rate-limit", "--latency-ms", "1,5"});
        assertThat(o).isEqualTo(new GcsEmulatorMain.Options("0.0.0.0", 0, List.of("locks", "files"), true, 1, 5));
    }

    @Test
    void badOptionsNameTheOption() {
        assertThatThrownBy(() -> GcsEmulatorMain.parse(new String[]{"--port", "x"})).hasMessageContaining("--port");
        assertThatThrownBy(() -> GcsEmulatorMain.parse(new String[]{"--port", "70000"})).hasMessageContaining("--port");
        assertThatThrownBy(() -> GcsEmulatorMain.parse(new String[]{"--bucket"})).hasMessageContaining("--bucket needs a value");
        assertThatThrownBy(() -> GcsEmulatorMain.parse(new String[]{"--bucket", "--port"})).hasMessageContaining("--bucket needs a value");
        assertThatThrownBy(() -> GcsEmulatorMain.parse(new String[]{"--latency-ms", "5,1"})).hasMessageContaining("--latency-ms");
        assertThatThrownBy(() -> GcsEmulatorMain.parse(new String[]{"--frob"})).hasMessageContaining("unknown option --frob");
    }

    @Test
    void startsOnAllInterfacesWithEveryBucketAndPrintsTheEndpoint() {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        GcsEmulatorMain.Options o = GcsEmulatorMain.parse(new String[]{"--port", "0", "--host", "0.0.0.0", "--bucket", "a", "--bucket", "b"});
        try (GcsEmulator gcs = GcsEmulatorMain.start(o, new PrintStream(printed, true, StandardCharsets.UTF_8))) {
            String out = printed.toString(StandardCharsets.UTF_8);
            assertThat(out).contains("listening on 0.0.0.0:" + gcs.port()).contains("gcslock.emulator.endpoint=" + gcs.endpoint());
            assertThat(gcs.endpoint()).isEqualTo("http://127.0.0.1:" + gcs.port());
            Storage storage = GcsEmulator.optionsFor(gcs.endpoint()).build().getService();
            for (String bucket : List.of("a", "b")) {
                storage.create(BlobInfo.newBuilder(bucket, "o").build(), new byte[]{1});
                assertThat(storage.readAllBytes(BlobId.of(bucket, "o"))).containsExactly(1);
            }
        }
    }
}
