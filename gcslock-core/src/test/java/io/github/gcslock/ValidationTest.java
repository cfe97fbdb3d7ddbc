package io.github.gcslock;

import com.google.cloud.storage.BucketInfo;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad input gets a clear error naming the setting or lock at fault, and nothing is lost. */
class ValidationTest extends EmulatorTestBase {

    private void assertRejected(Consumer<GcsLockRegistry.Builder> config, String setting, String messagePart) {
        GcsLockRegistry.Builder b = GcsLockRegistry.builder(storage, BUCKET);
        config.accept(b);
        assertThatThrownBy(b::build)
                .isInstanceOfSatisfying(GcsLockConfigurationException.class, e -> assertThat(e.setting()).isEqualTo(setting))
                .hasMessageContaining(messagePart);
    }

    @Test
    void defaultsAreTheReferenceValues() {
        GcsLockRegistry r = GcsLockRegistry.builder(storage, BUCKET).build();
        try {
            assertThat(r.ttl()).isEqualTo(Duration.ofMinutes(5));
            assertThat(r.prefix()).isEqualTo("gcslock/");
        } finally {
            r.close();
        }
    }

    @Test
    void refreshIntervalDefaultFollowsTheTtl() {
        // TTL/8 floored to whole seconds: 37 s for the 5-minute default; TTL/8 itself below a second.
        assertThat(GcsLockRegistry.builder(storage, BUCKET).effectiveRefreshInterval()).isEqualTo(Duration.ofSeconds(37));
        assertThat(GcsLockRegistry.builder(storage, BUCKET).ttl(Duration.ofMinutes(1)).effectiveRefreshInterval())
                .isEqualTo(Duration.ofSeconds(7));
        assertThat(GcsLockRegistry.builder(storage, BUCKET).ttl(Duration.ofSeconds(2)).effectiveRefreshInterval())
                .isEqualTo(Duration.ofMillis(250));
        assertThat(GcsLockRegistry.builder(storage, BUCKET).ttl(Duration.ofMinutes(1)).refreshInterval(Duration.ofSeconds(3))
                .effectiveRefreshInterval()).isEqualTo(Duration.ofSeconds(3));
        // Setting only the TTL builds: the refresh interval follows it instead of staying at 37 s.
        for (Duration ttl : new Duration[] {Duration.ofSeconds(4), Duration.ofSeconds(10), Duration.ofMinutes(1), Duration.ofHours(1)}) {
            assertThatCode(() -> GcsLockRegistry.builder(storage, BUCKET).ttl(ttl).verifyBucket(false).build().close())
                    .as("ttl %s alone", ttl).doesNotThrowAnyException();
        }
    }

    /**
     * Rule 21: refreshes of one object are at least a write window apart, so maxRefreshFailures of them must fit
     * before the deadline (ttl - safetyMargin). With GCS's 1 s window and 3 failures allowed, the derived settings
     * need a TTL above 3.75 s (deadline 0.8 TTL > 3 s); the refusal names the property and the smallest TTL.
     */
    @Test
    void aTtlTooShortForTheWriteWindowIsRefusedNamingTheSmallestTtlThatWorks() {
        assertRejected(b -> b.ttl(Duration.ofSeconds(1)), "ttl", "use a ttl of at least PT3.76S");
        assertRejected(b -> b.ttl(Duration.ofSeconds(2)), "ttl", "writeRateWindow (PT1S)");
        assertRejected(b -> b.ttl(Duration.ofSeconds(2)).maxRefreshFailures(2), "ttl", "use a ttl of at least PT2.51S");
        // An explicit safety margin counts in full: 3 windows + 2 s.
        assertRejected(b -> b.ttl(Duration.ofSeconds(4)).safetyMargin(Duration.ofSeconds(2)), "ttl", "use a ttl of at least PT5.01S");
        assertThatCode(() -> GcsLockRegistry.builder(storage, BUCKET).ttl(Duration.ofMillis(3760)).verifyBucket(false).build().close())
                .doesNotThrowAnyException();
        // The window scales with the setting: the tests' emulator runs with a 20 ms window and 1 s TTLs.
        assertThatCode(() -> GcsLockRegistry.builder(storage, BUCKET).ttl(Duration.ofSeconds(1)).writeRateWindow(Duration.ofMillis(20))
                .verifyBucket(false).build().close()).doesNotThrowAnyException();
    }

    @Test
    void rejectsBadSettingsNamingThem() {
        assertRejected(b -> b.ttl(Duration.ZERO), "ttl", "ttl must be a positive duration");
        assertRejected(b -> b.ttl(Duration.ofSeconds(-1)), "ttl", "positive");
        assertRejected(b -> b.refreshInterval(Duration.ZERO), "refreshInterval", "positive");
        assertRejected(b -> b.ttl(Duration.ofSeconds(60)).refreshInterval(Duration.ofSeconds(20)), "refreshInterval",
                "must be below ttl");
        assertRejected(b -> b.maxRefreshFailures(0), "maxRefreshFailures", "at least 1");
        assertRejected(b -> b.backoff(Duration.ofSeconds(5), Duration.ofSeconds(1), 2), "backoff.max", "must not be below");
        assertRejected(b -> b.backoff(Duration.ZERO, Duration.ofSeconds(1), 2), "backoff.initial", "positive");
        assertRejected(b -> b.backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 0.5), "backoff.multiplier", "at least 1");
        assertRejected(b -> b.prefix("locks#"), "prefix", "not allowed");
        assertRejected(b -> b.prefix(null), "prefix", "must not be null");
        assertRejected(b -> b.safetyMargin(Duration.ofMinutes(5)), "safetyMargin", "leave more than one refreshInterval");
        assertThatThrownBy(() -> GcsLockRegistry.builder(storage, " ").build())
                .isInstanceOfSatisfying(GcsLockConfigurationException.class, e -> assertThat(e.setting()).isEqualTo("bucket"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a#b", "a[b", "a]b", "a*b", "a?b", "tab\there", "nl\nhere", "a\uD800b", "\uDC00", "end\uD83D",
            "\uDE00\uD83D"})
    void rejectsBadLockNames(String name) {
        GcsLockRegistry r = registry();
        gcs.faults().resetCounters();
        assertThatThrownBy(() -> r.tryAcquire(name))
                .isInstanceOfSatisfying(GcsLockConfigurationException.class, e -> assertThat(e.setting()).isEqualTo("name"))
                .hasMessageContaining("lock name");
        assertThat(gcs.faults().totalRequests()).as("nothing sent for a bad name").isZero();
    }

    @Test
    void rejectsNamesOver1024BytesWithThePrefix() {
        GcsLockRegistry r = registry();
        String ok = "x".repeat(1024 - "gcslock/".length());
        assertThatCode(() -> r.tryAcquire(ok).orElseThrow().release()).doesNotThrowAnyException();
        assertThatThrownBy(() -> r.tryAcquire(ok + "é")).hasMessageContaining("1024");
    }

    /** A prefix must leave room for a name (GCS allows 1024 bytes of UTF-8 per object name). */
    @Test
    void aPrefixThatLeavesNoRoomForANameIsRefusedAtBuild() {
        assertRejected(b -> b.prefix("p".repeat(1024)), "prefix", "1024");
        assertRejected(b -> b.prefix("\u00e9".repeat(512)), "prefix", "1024"); // 1024 bytes of UTF-8
        assertRejected(b -> b.prefix("locks\uD800/"), "prefix", "surrogate");
        assertThatCode(() -> GcsLockRegistry.builder(storage, BUCKET).prefix("p".repeat(1023)).build().close())
                .doesNotThrowAnyException();
    }

    /** With a long prefix, a name that makes the object name too long is refused naming the lock (no index error). */
    @Test
    void aNameTooLongForALongPrefixIsRefusedNamingTheLock() {
        String prefix = "p/".repeat(500);
        GcsLockRegistry r = registry(b -> b.prefix(prefix));
        gcs.faults().resetCounters();
        String name = "x".repeat(30);
        assertThatThrownBy(() -> r.tryAcquire(name))
                .isInstanceOfSatisfying(GcsLockConfigurationException.class, e -> assertThat(e.setting()).isEqualTo("name"))
                .hasMessageContaining("'" + name + "'").hasMessageContaining("1024");
        assertThatThrownBy(() -> r.obtain(name)).isInstanceOf(GcsLockConfigurationException.class);
        assertThatThrownBy(() -> r.inspect(name)).isInstanceOf(GcsLockConfigurationException.class);
        assertThat(gcs.faults().totalRequests()).as("nothing sent for a bad name").isZero();
        String longest = "x".repeat(24);
        assertThatCode(() -> r.tryAcquire(longest).orElseThrow().release()).doesNotThrowAnyException();
    }

    @Test
    void missingBucketIsRefusedAtBuild() {
        assertThatThrownBy(() -> GcsLockRegistry.builder(storage, "nope").build())
                .isInstanceOf(GcsLockException.class)
                .hasMessageContaining("bucket 'nope' does not exist");
    }

    @Test
    void missingBucketWithoutTheCheckIsReportedAtAcquire() {
        GcsLockRegistry r = registry(b -> { });
        GcsLockRegistry unchecked = GcsLockRegistry.builder(storage, "nope").verifyBucket(false)
                .ttl(TTL).refreshInterval(REFRESH).writeRateWindow(Duration.ofMillis(20)).build();
        try {
            assertThatThrownBy(() -> unchecked.tryAcquire("job")).isInstanceOf(GcsLockException.class)
                    .hasMessageContaining("bucket 'nope' does not exist");
        } finally {
            unchecked.close();
        }
        assertThat(r).isNotNull();
    }

    @Test
    void retentionPolicyOrDefaultHoldIsRefusedWithTheReason() {
        gcs.createBucket(BucketInfo.newBuilder("retained").setRetentionPeriodDuration(Duration.ofDays(1)).build());
        gcs.createBucket(BucketInfo.newBuilder("held").setDefaultEventBasedHold(true).build());
        assertThatThrownBy(() -> GcsLockRegistry.builder(storage, "retained").build()).hasMessageContaining("retention policy");
        assertThatThrownBy(() -> GcsLockRegistry.builder(storage, "held").build()).hasMessageContaining("event-based hold");
    }

    @Test
    void versionedBucketIsAccepted() {
        gcs.createBucket(BucketInfo.newBuilder("versioned").setVersioningEnabled(true).build());
        GcsLockRegistry r = GcsLockRegistry.builder(storage, "versioned").build();
        r.close();
    }

    @Test
    void bucketCheckWithoutPermissionIsSkipped() {
        gcs.faults().failNext(1, 403, Operation.BUCKET_GET);
        GcsLockRegistry r = GcsLockRegistry.builder(storage, BUCKET).build();
        r.close();
    }

    @Test
    void permissionDeniedOnLockObjectsNamesThePermissions() {
        GcsLockRegistry r = registry();
        gcs.faults().failNext(1, 403, Operation.INSERT);
        assertThatThrownBy(() -> r.tryAcquire("job")).isInstanceOf(GcsLockException.class)
                .hasMessageContaining("permission denied").hasMessageContaining("storage.objects.create");
    }

    @Test
    void unreachableGcsAtAcquireIsAClearError() {
        GcsLockRegistry r = registry(b -> b.operationTimeout(Duration.ofMillis(300)));
        gcs.close();
        assertThatThrownBy(() -> r.tryAcquire("job")).isInstanceOf(GcsLockException.class)
                .hasMessageContaining("could not reach GCS for lock 'job'");
        assertThatThrownBy(() -> r.acquire("job", Duration.ofMillis(200))).isInstanceOf(LockNotAcquiredException.class)
                .hasMessageContaining("last GCS error");
    }

    /** GCS unreachable while a lease is held: the lease is declared lost before its TTL, never silently kept. */
    @Test
    void unreachableGcsMidLeaseLosesTheLeaseBeforeItsTtl() throws Exception {
        GcsLockRegistry r = registry(b -> b.operationTimeout(Duration.ofMillis(150)));
        Lease lease = r.acquire("job", Duration.ZERO);
        long t0 = System.nanoTime();
        gcs.close();
        org.awaitility.Awaitility.await("the lease to be lost within 3 s of GCS becoming unreachable")
                .atMost(Duration.ofSeconds(3)).until(() -> !lease.isHealthy());
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(TTL);
        assertThat(lease.lostReason()).isPresent();
        lease.release(); // does not throw, although GCS cannot be reached
    }

    /** GCS unreachable at start-up: the registry starts (logging a warning) and each lock call reports the error. */
    @Test
    void unreachableGcsAtStartUpIsNotFatalAndLockCallsSaySo() {
        gcs.close();
        GcsLockRegistry r = GcsLockRegistry.builder(storage, BUCKET).ttl(TTL).refreshInterval(REFRESH)
                .writeRateWindow(Duration.ofMillis(20)).operationTimeout(Duration.ofMillis(300)).build();
        try {
            assertThatThrownBy(() -> r.tryAcquire("job")).isInstanceOf(GcsLockException.class)
                    .hasMessageContaining("unknown whether the lock is free");
        } finally {
            r.close();
        }
    }

    @Test
    void negativeWaitIsRejected() {
        GcsLockRegistry r = registry();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofSeconds(-1))).isInstanceOf(GcsLockConfigurationException.class)
                .hasMessageContaining("maxWait");
    }
}
