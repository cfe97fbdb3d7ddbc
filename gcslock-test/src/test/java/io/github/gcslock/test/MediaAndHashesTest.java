package io.github.gcslock.test;

import com.google.cloud.ReadChannel;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** md5Hash/crc32c in metadata, x-goog-hash and ranges on media downloads, hash checks on uploads. */
class MediaAndHashesTest extends EmulatorTestBase {


    private String mediaUrl(String name) {
        return gcs.endpoint() + "/download/storage/v1/b/" + BUCKET + "/o/" + name + "?alt=media";
    }

    @Test
    void metadataCarriesBase64BigEndianMd5AndCrc32c() throws Exception {
        byte[] content = "The quick brown fox jumps over the lazy dog".getBytes(StandardCharsets.UTF_8);
        Blob b = storage.create(BlobInfo.newBuilder(BUCKET, "fox").build(), content);
        // Known values for this sentence: CRC32C 0x22620404, MD5 9e107d9d372bb6826bd81d3542a419d6.
        assertThat(b.getCrc32c()).isEqualTo("ImIEBA==").isEqualTo(crc32c(content));
        assertThat(b.getMd5()).isEqualTo("nhB9nTcrtoJr2B01QqQZ1g==").isEqualTo(md5(content));
        assertThat(b.getCrc32cToHexString()).isEqualTo("22620404");
        assertThat(storage.get(BlobId.of(BUCKET, "fox")).getMd5ToHexString()).isEqualTo("9e107d9d372bb6826bd81d3542a419d6");
    }

    @Test
    void mediaDownloadsCarryXGoogHashAndObjectHeaders() throws Exception {
        byte[] content = "hash me".getBytes(StandardCharsets.UTF_8);
        Blob b = storage.create(BlobInfo.newBuilder(BUCKET, "h").setContentType("text/plain").build(), content);
        HttpResponse<byte[]> r = RawHttp.send("GET", mediaUrl("h"), null, Map.of());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo(content);
        assertThat(r.headers().firstValue("x-goog-hash")).hasValue("crc32c=" + crc32c(content) + ",md5=" + md5(content));
        assertThat(r.headers().firstValue("x-goog-generation")).hasValue(Long.toString(b.getGeneration()));
        assertThat(r.headers().firstValue("x-goog-metageneration")).hasValue("1");
        assertThat(r.headers().firstValue("x-goog-stored-content-length")).hasValue(Integer.toString(content.length));
        assertThat(r.headers().firstValue("Content-Type")).hasValue("text/plain");
        assertThat(storage.readAllBytes(b.getBlobId())).isEqualTo(content);
    }

    @Test
    void byteRangesAnswer206WithContentRangeAndUnsatisfiableOnesAnswer416() {
        storage.create(BlobInfo.newBuilder(BUCKET, "r").build(), "0123456789".getBytes(StandardCharsets.UTF_8));
        HttpResponse<byte[]> mid = RawHttp.send("GET", mediaUrl("r"), null, Map.of("Range", "bytes=2-4"));
        assertThat(mid.statusCode()).isEqualTo(206);
        assertThat(RawHttp.text(mid)).isEqualTo("234");
        assertThat(mid.headers().firstValue("Content-Range")).hasValue("bytes 2-4/10");
        assertThat(RawHttp.text(RawHttp.send("GET", mediaUrl("r"), null, Map.of("Range", "bytes=7-")))).isEqualTo("789");
        assertThat(RawHttp.text(RawHttp.send("GET", mediaUrl("r"), null, Map.of("Range", "bytes=-3")))).isEqualTo("789");
        assertThat(RawHttp.text(RawHttp.send("GET", mediaUrl("r"), null, Map.of("Range", "bytes=8-100")))).isEqualTo("89");
        assertThat(RawHttp.send("GET", mediaUrl("r"), null, Map.of("Range", "bytes=10-")).statusCode()).isEqualTo(416);
        assertThat(RawHttp.send("GET", mediaUrl("r"), null, Map.of("Range", "bytes=0-1,4-5")).statusCode()).isEqualTo(501);
    }

    @Test
    void theClientsReadChannelSeeksAndLimitsThroughRanges() throws Exception {
        byte[] content = new byte[700_000];
        new Random(7).nextBytes(content);
        storage.create(BlobInfo.newBuilder(BUCKET, "big").build(), content);
        try (ReadChannel reader = storage.reader(BlobId.of(BUCKET, "big"))) {
            reader.seek(300_000);
            reader.limit(650_000);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
            while (reader.read(buf) >= 0) {
                buf.flip();
                out.write(buf.array(), 0, buf.limit());
                buf.clear();
            }
            assertThat(out.toByteArray()).isEqualTo(Arrays.copyOfRange(content, 300_000, 650_000));
        }
    }

    @Test
    void anUploadWhoseCrc32cDoesNotMatchItsContentIs400AndWritesNothing() {
        BlobInfo wrong = BlobInfo.newBuilder(BUCKET, "bad").setCrc32c("AAAAAA==").build();
        assertThatThrownBy(() -> storage.createFrom(wrong, new ByteArrayInputStream("content".getBytes(StandardCharsets.UTF_8)),
                Storage.BlobWriteOption.crc32cMatch()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(400));
        assertThat(storage.get(BlobId.of(BUCKET, "bad"))).isNull();
    }

    @Test
    void anUploadWhoseMd5DoesNotMatchItsContentIs400() {
        BlobInfo wrong = BlobInfo.newBuilder(BUCKET, "bad").setMd5("1B2M2Y8AsgTpgAmY7PhCfg==").build();
        assertThatThrownBy(() -> storage.createFrom(wrong, new ByteArrayInputStream("content".getBytes(StandardCharsets.UTF_8)),
                Storage.BlobWriteOption.md5Match()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(400));
    }
}
