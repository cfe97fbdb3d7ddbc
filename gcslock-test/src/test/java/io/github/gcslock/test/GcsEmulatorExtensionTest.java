package io.github.gcslock.test;

import com.google.cloud.storage.BlobInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

class GcsEmulatorExtensionTest {

    @RegisterExtension
    static GcsEmulatorExtension gcs = new GcsEmulatorExtension("one", "two");

    @Test
    void bucketsExistAndFaultsAreReset() {
        assertThat(gcs.storage().get("one")).isNotNull();
        assertThat(gcs.storage().get("two")).isNotNull();
        gcs.storage().create(BlobInfo.newBuilder("one", "x").build(), new byte[0]);
        assertThat(gcs.endpoint()).startsWith("http://127.0.0.1:");
        gcs.faults().failNext(100, 403); // not retried by the client: the next test would see it without the reset
    }

    @Test
    void aFailureLeftByAnotherTestIsGone() {
        assertThat(gcs.storage().get("one")).isNotNull();
    }
}
