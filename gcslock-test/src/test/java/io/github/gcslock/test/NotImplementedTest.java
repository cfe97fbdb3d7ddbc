package io.github.gcslock.test;

import com.google.cloud.storage.Acl;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.BucketInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the emulator does not implement answers 501 with a message naming it, through the real client:
 * never a silent success that real GCS would not give.
 */
class NotImplementedTest extends EmulatorTestBase {

    private BlobId existing;

    @BeforeEach
    void createObject() {
        existing = storage.create(BlobInfo.newBuilder(BUCKET, "x").build(), new byte[]{1}).getBlobId();
    }

    private static void answers501Naming(ThrowingCallable call, String what) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StorageException.class, e -> {
            assertThat(e.getCode()).as(e.getMessage()).isEqualTo(501);
            assertThat(e.getMessage()).contains("does not implement").contains(what);
        });
    }

    @Test
    void operations() {
        answers501Naming(() -> storage.lockRetentionPolicy(storage.get(BUCKET),
                Storage.BucketTargetOption.metagenerationMatch()), "lockRetentionPolicy");
        answers501Naming(() -> storage.update(BucketInfo.newBuilder(BUCKET).setVersioningEnabled(true).build()), "PATCH /storage/v1/b/b");
        answers501Naming(() -> storage.createAcl(existing, Acl.of(Acl.User.ofAllUsers(), Acl.Role.READER)), "/acl");
        answers501Naming(() -> storage.getIamPolicy(BUCKET), "/iam");
        answers501Naming(() -> storage.getServiceAccount("p"), "serviceAccount");
        answers501Naming(() -> storage.delete(existing, BlobId.of(BUCKET, "y")), "/batch/storage/v1");
        assertThat(storage.get(existing)).as("nothing of the batch was done").isNotNull();
    }

    @Test
    void queryParametersTheEmulatorWouldIgnore() {
        answers501Naming(() -> storage.create(BlobInfo.newBuilder(BUCKET, "acl").build(), new byte[0],
                Storage.BlobTargetOption.predefinedAcl(Storage.PredefinedAcl.PUBLIC_READ)), "predefinedAcl");
        answers501Naming(() -> storage.create(BlobInfo.newBuilder(BUCKET, "kms").build(), new byte[0],
                Storage.BlobTargetOption.kmsKeyName("projects/p/locations/l/keyRings/r/cryptoKeys/k")), "kmsKeyName");
        answers501Naming(() -> storage.list(BUCKET, Storage.BlobListOption.softDeleted(true)).iterateAll().forEach(b -> { }),
                "softDeleted=true");
        answers501Naming(() -> storage.create(BucketInfo.of("acl-bucket"), Storage.BucketTargetOption.predefinedAcl(
                Storage.PredefinedAcl.PRIVATE)), "predefinedAcl");
        answers501Naming(() -> storage.get(BUCKET, Storage.BucketGetOption.metagenerationMatch(1)), "ifMetagenerationMatch");
        assertThat(storage.get(BlobId.of(BUCKET, "missing"))).as("harmless parameters still work").isNull();

        HttpResponse<byte[]> raw = RawHttp.send("GET", gcs.endpoint() + "/storage/v1/b/b/o/x?frobnicate=1", null, Map.of());
        assertThat(raw.statusCode()).isEqualTo(501);
        assertThat(RawHttp.text(raw)).contains("'frobnicate'").contains("objects.get");
    }

    @Test
    void customerSuppliedEncryptionKeys() {
        String key = Base64.getEncoder().encodeToString(new byte[32]);
        answers501Naming(() -> storage.create(BlobInfo.newBuilder(BUCKET, "csek").build(), new byte[0],
                Storage.BlobTargetOption.encryptionKey(key)), "customer-supplied encryption keys");
        answers501Naming(() -> storage.readAllBytes(existing, Storage.BlobSourceOption.decryptionKey(key)),
                "customer-supplied encryption keys");
    }

    @Test
    void uploadTypesAndOtherApis() {
        HttpResponse<byte[]> weird = RawHttp.send("POST", gcs.endpoint() + "/upload/storage/v1/b/b/o?uploadType=chunked&name=n",
                new byte[0], Map.of());
        assertThat(weird.statusCode()).isEqualTo(501);
        assertThat(RawHttp.text(weird)).contains("uploadType=chunked");

        HttpResponse<byte[]> xml = RawHttp.send("PUT", gcs.endpoint() + "/b/object", "x".getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(xml.statusCode()).isEqualTo(501);
        assertThat(RawHttp.text(xml)).contains("PUT /b/object");
    }

    @Test
    void fieldsIsAcceptedAndAnsweredWithASuperset() {
        Blob b = storage.get(existing, Storage.BlobGetOption.fields(Storage.BlobField.SIZE));
        assertThat(b.getSize()).isEqualTo(1L);
    }
}
