package io.github.gcslock.test;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.WriteChannel;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.BlobWriteSession;
import com.google.cloud.storage.BlobWriteSessionConfigs;
import com.google.cloud.storage.ParallelCompositeUploadBlobWriteSessionConfig.BufferAllocationStrategy;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Resumable uploads through the real client's {@code storage.writer(...)}, {@code BlobWriteSession} and {@code createFrom}, and over raw HTTP. */
class ResumableUploadTest extends EmulatorTestBase {

    private static final int CHUNK = 256 * 1024;

    @Override
    RetrySettings retrySettings() {
        return quickRetries(Duration.ofSeconds(10));
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        return b;
    }

    private static void writeInPieces(WritableByteChannel w, byte[] content) throws IOException {
        int pos = 0;
        int piece = 1;
        while (pos < content.length) {
            int len = Math.min(piece, content.length - pos);
            w.write(ByteBuffer.wrap(content, pos, len));
            pos += len;
            piece = piece * 3 + 7; // odd sizes, so chunk boundaries fall inside writes
        }
    }

    private Blob upload(String name, byte[] content, Storage.BlobWriteOption... options) throws IOException {
        try (WriteChannel w = storage.writer(BlobInfo.newBuilder(BUCKET, name).setContentType("text/plain").build(), options)) {
            w.setChunkSize(CHUNK);
            writeInPieces(w, content);
        }
        return storage.get(BlobId.of(BUCKET, name));
    }

    @Test
    void writerOfZeroBytesCreatesAnEmptyObject() throws Exception {
        gcs.faults().resetCounters();
        Blob b = upload("empty", new byte[0]);
        assertThat(b.getSize()).isZero();
        assertThat(b.getContentType()).isEqualTo("text/plain");
        assertThat(b.getCrc32c()).isEqualTo("AAAAAA==");
        assertThat(b.getMd5()).isEqualTo(md5(new byte[0]));
        assertThat(storage.readAllBytes(b.getBlobId())).isEmpty();
        assertThat(gcs.faults().requestCount(Operation.INSERT)).as("session start").isEqualTo(1);
        assertThat(gcs.faults().requestCount(Operation.UPLOAD)).as("one finalising PUT").isEqualTo(1);
    }

    @Test
    void writerOfLessThanOneChunkSendsOnePut() throws Exception {
        byte[] content = "hello, resumable world".getBytes(StandardCharsets.UTF_8);
        gcs.faults().resetCounters();
        Blob b = upload("dir/one", content);
        assertThat(storage.readAllBytes(b.getBlobId())).isEqualTo(content);
        assertThat(b.getSize()).isEqualTo(content.length);
        assertThat(b.getMd5()).isEqualTo(md5(content));
        assertThat(b.getCrc32c()).isEqualTo(crc32c(content));
        assertThat(gcs.faults().requestCount(Operation.UPLOAD)).isEqualTo(1);
    }

    @Test
    void writerOfSeveralChunksUploadsEveryByteInOrder() throws Exception {
        byte[] content = randomBytes(3 * CHUNK + 12_345);
        gcs.faults().resetCounters();
        Blob b = upload("big", content);
        assertThat(b.getSize()).isEqualTo(content.length);
        assertThat(b.getMd5()).isEqualTo(md5(content));
        assertThat(b.getCrc32c()).isEqualTo(crc32c(content));
        assertThat(storage.readAllBytes(b.getBlobId())).isEqualTo(content);
        assertThat(gcs.faults().requestCount(Operation.UPLOAD)).as("3 full chunks + the last").isGreaterThanOrEqualTo(4);
    }

    @Test
    void writerOfAnExactMultipleOfTheChunkSizeFinalisesWithAnEmptyPut() throws Exception {
        byte[] content = randomBytes(2 * CHUNK);
        Blob b = upload("exact", content);
        assertThat(storage.readAllBytes(b.getBlobId())).isEqualTo(content);
    }

    @Test
    void resumableCreateThatLosesToAnExistingObjectGets412AndLeavesItAlone() {
        Blob existing = storage.create(BlobInfo.newBuilder(BUCKET, "taken").build(), "first".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> upload("taken", "second".getBytes(StandardCharsets.UTF_8), Storage.BlobWriteOption.doesNotExist()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        Blob now = storage.get(BlobId.of(BUCKET, "taken"));
        assertThat(now.getGeneration()).isEqualTo(existing.getGeneration());
        assertThat(storage.readAllBytes(now.getBlobId())).asString(StandardCharsets.UTF_8).isEqualTo("first");
    }

    @Test
    void preconditionsAreCheckedWhenTheUploadFinishesNotWhenItStarts() throws Exception {
        // Two "create if absent" writers: one is mid-upload when the other's object appears. If the
        // precondition were only checked at session start, both would succeed and one would overwrite.
        byte[] content = randomBytes(2 * CHUNK + 10);
        WriteChannel w = storage.writer(BlobInfo.newBuilder(BUCKET, "race").build(), Storage.BlobWriteOption.doesNotExist());
        w.setChunkSize(CHUNK);
        w.write(ByteBuffer.wrap(content, 0, 2 * CHUNK)); // flushes at least one chunk: the session exists
        assertThat(gcs.faults().requestCount(Operation.UPLOAD)).isPositive();
        Blob winner = storage.create(BlobInfo.newBuilder(BUCKET, "race").build(), new byte[]{1}, Storage.BlobTargetOption.doesNotExist());
        w.write(ByteBuffer.wrap(content, 2 * CHUNK, 10));
        assertThatThrownBy(w::close)
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThat(storage.get(BlobId.of(BUCKET, "race")).getGeneration()).isEqualTo(winner.getGeneration());
    }

    @Test
    void generationMatchOnAResumableUploadReplacesOnlyThatGeneration() throws Exception {
        Blob v1 = storage.create(BlobInfo.newBuilder(BUCKET, "g").build(), new byte[]{1});
        assertThatThrownBy(() -> upload("g", new byte[]{2}, Storage.BlobWriteOption.generationMatch(v1.getGeneration() + 1)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        Blob v2 = upload("g", new byte[]{3}, Storage.BlobWriteOption.generationMatch(v1.getGeneration()));
        assertThat(v2.getGeneration()).isGreaterThan(v1.getGeneration());
        assertThat(storage.readAllBytes(v2.getBlobId())).containsExactly(3);
    }

    @Test
    void blobWriteSessionWithTheDefaultConfigUploads() throws Exception {
        byte[] content = randomBytes(CHUNK + 99);
        BlobWriteSession session = storage.blobWriteSession(BlobInfo.newBuilder(BUCKET, "session").build(),
                Storage.BlobWriteOption.doesNotExist());
        try (WritableByteChannel ch = session.open()) {
            writeInPieces(ch, content);
        }
        BlobInfo result = session.getResult().get();
        assertThat(result.getSize()).isEqualTo(content.length);
        assertThat(storage.readAllBytes(BlobId.of(BUCKET, "session"))).isEqualTo(content);
    }

    @Test
    void blobWriteSessionBufferedToDiskUploads(@TempDir Path dir) throws Exception {
        byte[] content = randomBytes(CHUNK + 7);
        Storage buffered = gcs.options().setBlobWriteSessionConfig(BlobWriteSessionConfigs.bufferToDiskThenUpload(dir))
                .build().getService();
        BlobWriteSession session = buffered.blobWriteSession(BlobInfo.newBuilder(BUCKET, "buffered").build(),
                Storage.BlobWriteOption.doesNotExist());
        try (WritableByteChannel ch = session.open()) {
            writeInPieces(ch, content);
        }
        assertThat(session.getResult().get().getSize()).isEqualTo(content.length);
        assertThat(storage.readAllBytes(BlobId.of(BUCKET, "buffered"))).isEqualTo(content);
    }

    @Test
    void parallelCompositeUploadComposesItsPartsAndCleansUp() throws Exception {
        byte[] content = randomBytes(3 * CHUNK + 5);
        Storage pcu = gcs.options().setBlobWriteSessionConfig(BlobWriteSessionConfigs.parallelCompositeUpload()
                        .withBufferAllocationStrategy(BufferAllocationStrategy.simple(CHUNK)))
                .build().getService();
        BlobWriteSession session = pcu.blobWriteSession(BlobInfo.newBuilder(BUCKET, "pcu").build(), Storage.BlobWriteOption.doesNotExist());
        try (WritableByteChannel ch = session.open()) {
            writeInPieces(ch, content);
        }
        BlobInfo result = session.getResult().get();
        assertThat(result.getComponentCount()).isGreaterThan(1);
        assertThat(storage.readAllBytes(BlobId.of(BUCKET, "pcu"))).isEqualTo(content);
        List<String> left = new ArrayList<>();
        storage.list(BUCKET).iterateAll().forEach(b -> left.add(b.getName()));
        assertThat(left).as("the parts are deleted").containsExactly("pcu");
    }

    @Test
    void createFromAFileUsesAResumableUpload(@TempDir Path dir) throws Exception {
        byte[] content = randomBytes(CHUNK * 2 + 1);
        Path file = dir.resolve("f.bin");
        Files.write(file, content);
        gcs.faults().resetCounters();
        Blob b = storage.createFrom(BlobInfo.newBuilder(BUCKET, "from-file").build(), file, CHUNK);
        assertThat(b.getSize()).isEqualTo(content.length);
        assertThat(storage.readAllBytes(b.getBlobId())).isEqualTo(content);
        assertThat(gcs.faults().requestCount(Operation.UPLOAD)).isPositive();
    }

    @Test
    void aLostReplyToTheFinalChunkIsRecoveredFromTheSession() throws Exception {
        byte[] content = "final reply lost".getBytes(StandardCharsets.UTF_8);
        gcs.faults().dropNextReply(Operation.UPLOAD);
        Blob b = upload("lost-final", content);
        assertThat(storage.readAllBytes(b.getBlobId())).isEqualTo(content);
        assertThat(gcs.faults().requestCount(Operation.UPLOAD)).as("the final PUT, then the client's retry").isGreaterThanOrEqualTo(2);
    }

    @Test
    void resumableUploadToAMissingBucketIs404() {
        assertThatThrownBy(() -> {
            try (WriteChannel w = storage.writer(BlobInfo.newBuilder("no-such-bucket", "x").build())) {
                w.write(ByteBuffer.wrap(new byte[1]));
            }
        })
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(404));
    }

    // ---- the protocol step by step, over raw HTTP ----

    private String startSession(String name) {
        HttpResponse<byte[]> r = RawHttp.send("POST", gcs.endpoint() + "/upload/storage/v1/b/" + BUCKET
                + "/o?uploadType=resumable&name=" + name, "{}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json", "X-Upload-Content-Type", "application/x-test"));
        assertThat(r.statusCode()).isEqualTo(200);
        String location = r.headers().firstValue("Location").orElseThrow();
        assertThat(location).startsWith(gcs.endpoint() + "/upload/storage/v1/b/" + BUCKET + "/o?").contains("upload_id=");
        return location;
    }

    private static HttpResponse<byte[]> put(String session, byte[] body, String contentRange) {
        return RawHttp.send("PUT", session, body, Map.of("Content-Range", contentRange));
    }

    @Test
    void statusQueryAnswers308WithThePersistedRange() {
        String session = startSession("steps");
        HttpResponse<byte[]> fresh = put(session, new byte[0], "bytes */*");
        assertThat(fresh.statusCode()).isEqualTo(308);
        assertThat(fresh.headers().firstValue("Range")).as("nothing persisted yet").isEmpty();

        byte[] content = randomBytes(CHUNK + 5);
        HttpResponse<byte[]> first = put(session, Arrays.copyOfRange(content, 0, CHUNK), "bytes 0-" + (CHUNK - 1) + "/*");
        assertThat(first.statusCode()).isEqualTo(308);
        assertThat(first.headers().firstValue("Range")).hasValue("bytes=0-" + (CHUNK - 1));
        assertThat(put(session, new byte[0], "bytes */*").headers().firstValue("Range")).hasValue("bytes=0-" + (CHUNK - 1));

        // A resent chunk that overlaps what is persisted only adds the new bytes.
        HttpResponse<byte[]> last = put(session, Arrays.copyOfRange(content, 10, content.length),
                "bytes 10-" + (content.length - 1) + "/" + content.length);
        assertThat(last.statusCode()).isEqualTo(200);
        assertThat(JsonParser.parseString(RawHttp.text(last)).getAsJsonObject().get("size").getAsString())
                .isEqualTo(Integer.toString(content.length));
        assertThat(storage.readAllBytes(BlobId.of(BUCKET, "steps"))).isEqualTo(content);
        assertThat(storage.get(BlobId.of(BUCKET, "steps")).getContentType()).isEqualTo("application/x-test");

        HttpResponse<byte[]> again = put(session, new byte[0], "bytes */*");
        assertThat(again.statusCode()).as("a finished session answers with the object").isEqualTo(200);
    }

    @Test
    void aNonFinalChunkThatIsNotAMultipleOf256KiBIsPersistedOnlyUpToTheLastFullQuantum() {
        String session = startSession("partial");
        byte[] content = randomBytes(CHUNK + 100);
        HttpResponse<byte[]> r = put(session, content, "bytes 0-" + (content.length - 1) + "/*");
        assertThat(r.statusCode()).isEqualTo(308);
        assertThat(r.headers().firstValue("Range")).hasValue("bytes=0-" + (CHUNK - 1));
    }

    @Test
    void aChunkBeyondThePersistedBytesIs400() {
        String session = startSession("gap");
        HttpResponse<byte[]> r = put(session, new byte[10], "bytes 100-109/*");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(RawHttp.text(r)).contains("only 0 bytes are persisted");
    }

    @Test
    void cancellingASessionAnswers499AndTheSessionTakesNoMoreData() {
        String session = startSession("cancelled");
        put(session, new byte[CHUNK], "bytes 0-" + (CHUNK - 1) + "/*");
        assertThat(RawHttp.send("DELETE", session, null, Map.of()).statusCode()).isEqualTo(499);
        assertThat(put(session, new byte[1], "bytes 0-0/1").statusCode()).isEqualTo(499);
        assertThat(storage.get(BlobId.of(BUCKET, "cancelled"))).isNull();
    }

    @Test
    void aWrongHashOnTheFinalChunkIs400AndWritesNothing() {
        String session = startSession("hashed");
        HttpResponse<byte[]> r = RawHttp.send("PUT", session, new byte[]{1, 2, 3},
                Map.of("Content-Range", "bytes 0-2/3", "x-goog-hash", "crc32c=AAAAAA=="));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(RawHttp.text(r)).contains("CRC32C");
        assertThat(storage.get(BlobId.of(BUCKET, "hashed"))).isNull();
    }

    // ---- every Content-Range form GCS accepts for resumable uploads ----

    private void assertObject(String name, byte[] content, HttpResponse<byte[]> finalReply) {
        assertThat(finalReply.statusCode()).as(RawHttp.text(finalReply)).isEqualTo(200);
        assertThat(JsonParser.parseString(RawHttp.text(finalReply)).getAsJsonObject().get("size").getAsString())
                .isEqualTo(Integer.toString(content.length));
        assertThat(storage.readAllBytes(BlobId.of(BUCKET, name))).isEqualTo(content);
    }

    @Test
    void anOpenEndedRangeOfUnknownTotalIsTheWholeRestOfTheObject() {
        // The Node.js client's default streaming upload: one PUT, "bytes 0-*/*".
        String session = startSession("node-stream");
        byte[] content = randomBytes(CHUNK + 1234);
        assertObject("node-stream", content, put(session, content, "bytes 0-*/*"));
    }

    @Test
    void anOpenEndedRangeOfUnknownTotalAfterPersistedChunksFinishesTheUpload() {
        String session = startSession("node-resumed");
        byte[] content = randomBytes(CHUNK + 77);
        assertThat(put(session, Arrays.copyOfRange(content, 0, CHUNK), "bytes 0-" + (CHUNK - 1) + "/*").statusCode()).isEqualTo(308);
        assertObject("node-resumed", content, put(session, Arrays.copyOfRange(content, CHUNK, content.length), "bytes " + CHUNK + "-*/*"));
    }

    @Test
    void anOpenEndedRangeWithAKnownTotalFinishesWhenItReachesTheTotal() {
        String session = startSession("node-known");
        byte[] content = randomBytes(CHUNK + 10);
        HttpResponse<byte[]> partial = put(session, Arrays.copyOfRange(content, 0, CHUNK + 3), "bytes 0-*/" + content.length);
        assertThat(partial.statusCode()).as("short of the total: only whole 256 KiB quanta are kept").isEqualTo(308);
        assertThat(partial.headers().firstValue("Range")).hasValue("bytes=0-" + (CHUNK - 1));
        assertObject("node-known", content, put(session, Arrays.copyOfRange(content, CHUNK, content.length), "bytes " + CHUNK + "-*/" + content.length));
    }

    @Test
    void anEmptyOpenEndedRangeOfUnknownTotalCreatesAnEmptyObject() {
        String session = startSession("node-empty");
        assertObject("node-empty", new byte[0], put(session, new byte[0], "bytes 0-*/*"));
    }

    @Test
    void aStatusQueryWithTheTotalFinalisesAnUploadWhoseBytesArePersisted() {
        String session = startSession("finalise");
        byte[] content = randomBytes(CHUNK);
        assertThat(put(session, content, "bytes 0-" + (CHUNK - 1) + "/*").statusCode()).isEqualTo(308);
        assertThat(put(session, new byte[0], "bytes */" + (CHUNK + 1)).statusCode()).as("one byte short").isEqualTo(308);
        assertObject("finalise", content, put(session, new byte[0], "bytes */" + CHUNK));
    }

    @Test
    void malformedContentRangesAre400() {
        String session = startSession("malformed");
        for (String bad : List.of("bytes 0-*", "0-9/10", "bytes x-*/*", "bytes 5-2/10", "bytes -1-*/*", "bytes 0-*/-4")) {
            HttpResponse<byte[]> r = put(session, new byte[3], bad);
            assertThat(r.statusCode()).as(bad).isEqualTo(400);
        }
        assertThat(put(session, new byte[3], "bytes 0-*/2").statusCode()).as("a body longer than the total").isEqualTo(400);
    }

    @Test
    void anUnknownSessionIs404() {
        HttpResponse<byte[]> r = put(gcs.endpoint() + "/upload/storage/v1/b/" + BUCKET + "/o?uploadType=resumable&upload_id=nope",
                new byte[0], "bytes */*");
        assertThat(r.statusCode()).isEqualTo(404);
    }
}
