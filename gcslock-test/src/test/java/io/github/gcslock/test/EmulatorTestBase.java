package io.github.gcslock.test;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.storage.Storage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Base64;
import java.util.zip.CRC32C;

/**
 * A fresh emulator per test with bucket {@value #BUCKET}, and a client of it ({@link #storage}) that
 * makes one attempt per call unless a test class asks for retries ({@link #retrySettings()}).
 */
abstract class EmulatorTestBase {

    static final String BUCKET = "b";

    GcsEmulator gcs;
    Storage storage;

    @BeforeEach
    void startEmulator() {
        gcs = GcsEmulator.start();
        gcs.createBucket(BUCKET);
        storage = gcs.storage(retrySettings());
    }

    @AfterEach
    void stopEmulator() {
        gcs.close();
    }

    /** The retries of {@link #storage}: one attempt, so each test sees the emulator's first answer. */
    RetrySettings retrySettings() {
        return RetrySettings.newBuilder().setMaxAttempts(1).setTotalTimeoutDuration(Duration.ofSeconds(10)).build();
    }

    /** Three quick attempts within {@code total}: for tests of what the client does after a failed call. */
    static RetrySettings quickRetries(Duration total) {
        return RetrySettings.newBuilder().setMaxAttempts(3)
                .setInitialRetryDelayDuration(Duration.ofMillis(10)).setMaxRetryDelayDuration(Duration.ofMillis(20))
                .setTotalTimeoutDuration(total).build();
    }

    /** Base64 of the MD5 of {@code b}, as GCS writes {@code md5Hash}; computed here apart from the emulator's code. */
    static String md5(byte[] b) throws NoSuchAlgorithmException {
        return Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(b));
    }

    /** Base64 of the big-endian CRC32C of {@code b}, as GCS writes {@code crc32c}. */
    static String crc32c(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return Base64.getEncoder().encodeToString(ByteBuffer.allocate(4).putInt((int) c.getValue()).array());
    }
}
