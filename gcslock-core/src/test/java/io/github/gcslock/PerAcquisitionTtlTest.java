package io.github.gcslock;

import com.google.cloud.storage.Blob;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * An acquisition with its own TTL: stored in the lock object (others judge staleness by it), refreshed and
 * given a deadline by it, validated, and changed by a renewal. The registries here have a long TTL (30 s)
 * and refresh interval (3 s), so that anything that happens within a second or two comes from the
 * acquisition's own, short TTL.
 */
class PerAcquisitionTtlTest extends EmulatorTestBase {

    private static final Duration LONG_TTL = Duration.ofSeconds(30);

    private GcsLockRegistry longTtlRegistry() {
        return registry(b -> b.ttl(LONG_TTL).refreshInterval(Duration.ofSeconds(3)).maxRefreshFailures(3));
    }

    private long storedTtlMillis(String name) {
        Blob b = object(name);
        return Long.parseLong(b.getMetadata().get("gcslock-ttl"));
    }

    @Test
    void theAcquisitionsTtlIsStoredAndItsRefreshesFollowIt() {
        GcsLockRegistry r = longTtlRegistry();
        Lease lease = r.tryAcquire("own-ttl", Duration.ofMillis(800)).orElseThrow();
        assertThat(storedTtlMillis("own-ttl")).isEqualTo(800);
        assertThat(Duration.between(lease.lastRefreshAt(), lease.expiresAt())).isEqualTo(Duration.ofMillis(800));

        Instant first = lease.lastRefreshAt();
        // Refreshed every 100 ms (TTL/8), long before the registry's 3 s interval.
        await("a refresh at the acquisition's own interval (TTL/8), before the registry's 3 s")
                .atMost(Duration.ofSeconds(2)).until(() -> lease.lastRefreshAt().isAfter(first));
        assertThat(storedTtlMillis("own-ttl")).as("each refresh writes the acquisition's TTL").isEqualTo(800);
        assertThat(lease.isHealthy()).isTrue();

        Lease plain = r.tryAcquire("registry-ttl").orElseThrow();
        assertThat(storedTtlMillis("registry-ttl")).isEqualTo(LONG_TTL.toMillis());
        plain.release();
        lease.release();
    }

    @Test
    void aHolderThatStopsRefreshingLosesTheLeaseAndIsTakenOverAfterItsOwnTtl() throws Exception {
        GcsLockRegistry holder = longTtlRegistry();
        GcsLockRegistry other = longTtlRegistry();
        Lease lease = holder.tryAcquire("crash", Duration.ofSeconds(1)).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        lease.onLost((l, e) -> lostAt.compareAndSet(0, System.nanoTime()));

        // The holder can no longer refresh (its PATCHes fail); the other registry never PATCHes here.
        gcs.faults().failNext(10_000, 503, Operation.PATCH);
        await("the lease with a 1 s TTL to be lost within 3 s of its PATCHes failing")
                .atMost(Duration.ofSeconds(3)).until(() -> !lease.isHealthy());

        // With the registry's 30 s TTL this would time out; the object's own 1 s TTL lets it be taken over.
        Lease taken = other.acquire("crash", Duration.ofSeconds(5));
        long takenAt = System.nanoTime();
        assertThat(lostAt.get()).as("the holder knew it lost the lock before anyone took it over").isPositive();
        assertThat(lostAt.get() - takenAt).isNegative();
        gcs.faults().reset();
        taken.release();
        lease.release();
    }

    @Test
    void invalidTtlsAreRefusedNamingTheLockAndNothingIsHeld() {
        GcsLockRegistry r = longTtlRegistry();
        assertThatThrownBy(() -> r.tryAcquire("bad-ttl", Duration.ZERO))
                .isInstanceOfSatisfying(GcsLockConfigurationException.class, e -> assertThat(e.setting()).isEqualTo("ttl"))
                .hasMessageContaining("bad-ttl");
        assertThatThrownBy(() -> r.acquire("bad-ttl", Duration.ofMillis(10), Duration.ofSeconds(-1)))
                .isInstanceOf(GcsLockConfigurationException.class).hasMessageContaining("bad-ttl");
        GcsLockRegistry eightFailures = registry(b -> b.ttl(LONG_TTL).refreshInterval(Duration.ofSeconds(3)).maxRefreshFailures(8));
        assertThatThrownBy(() -> eightFailures.tryAcquire("bad-ttl", Duration.ofSeconds(8)))
                .isInstanceOf(GcsLockConfigurationException.class).hasMessageContaining("maxRefreshFailures");
        assertThat(object("bad-ttl")).isNull();
        assertThat(r.tryAcquire("bad-ttl")).isPresent();
    }

    @Test
    void aNestedAcquireKeepsTheOuterHoldsTtl() {
        GcsLockRegistry r = longTtlRegistry();
        Lease outer = r.tryAcquire("nested", Duration.ofSeconds(2)).orElseThrow();
        Lease inner = r.tryAcquire("nested", Duration.ofSeconds(20)).orElseThrow();
        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        assertThat(storedTtlMillis("nested")).isEqualTo(2000);
        inner.release();
        outer.release();
        assertThat(object("nested")).isNull();
    }

    @Test
    void renewalRefreshesAtOnceAndMayChangeTheTtl() {
        GcsLockRegistry r = longTtlRegistry();
        Lease lease = r.tryAcquire("renewed").orElseThrow();
        long metageneration = object("renewed").getMetageneration();

        r.renew(lease, null);
        assertThat(object("renewed").getMetageneration()).as("one refresh, now").isEqualTo(metageneration + 1);
        assertThat(storedTtlMillis("renewed")).isEqualTo(LONG_TTL.toMillis());

        r.renew(lease, Duration.ofMillis(900));
        assertThat(storedTtlMillis("renewed")).isEqualTo(900);
        assertThat(Duration.between(lease.lastRefreshAt(), lease.expiresAt())).isEqualTo(Duration.ofMillis(900));
        Instant renewedAt = lease.lastRefreshAt();
        await("a refresh at the renewed TTL's interval (~112 ms), before the registry's 3 s")
                .atMost(Duration.ofSeconds(2)).until(() -> lease.lastRefreshAt().isAfter(renewedAt)); // ~112 ms now

        r.renew(lease, Duration.ofSeconds(20));
        assertThat(storedTtlMillis("renewed")).isEqualTo(20_000);
        assertThat(lease.isHealthy()).isTrue();

        lease.release();
        assertThatThrownBy(() -> r.renew(lease, null)).isInstanceOf(LockLostException.class);
        assertThatThrownBy(() -> r.renew(lease, Duration.ZERO)).isInstanceOf(LockLostException.class);
    }

    @Test
    void aShorterTtlCapsTheDeadlineFromTheMomentItIsSent() {
        // The unit rule behind a renewal to a shorter TTL whose reply is lost: the object may carry the
        // shorter TTL already, so the lease must count itself lost by it, from when that write was sent.
        GcsLockRegistry r = longTtlRegistry();
        GcsLease lease = (GcsLease) r.tryAcquire("cap").orElseThrow();
        long before = lease.deadlineNanos();
        LeaseTiming shorter = LeaseTiming.derive("cap", Duration.ofSeconds(1), 3);
        long sent = r.nanoTime();
        lease.sending(shorter, sent);
        assertThat(lease.deadlineNanos()).isEqualTo(sent + shorter.deadlineSpanNanos());
        assertThat(lease.deadlineNanos() - before).isNegative();

        lease.timingConfirmed(shorter); // confirmed: the shorter TTL is in force, from the last confirmed write
        assertThat(lease.timing()).isEqualTo(shorter);

        LeaseTiming longer = LeaseTiming.derive("cap", Duration.ofSeconds(20), 3);
        long deadline = lease.deadlineNanos();
        lease.sending(longer, r.nanoTime());
        assertThat(lease.deadlineNanos()).as("a longer TTL counts only once confirmed").isEqualTo(deadline);
        lease.release();
    }

    @Test
    void derivedTimingFollowsTheRegistrysDefaultRules() {
        LeaseTiming fiveMinutes = LeaseTiming.derive("x", Duration.ofMinutes(5), 3);
        assertThat(fiveMinutes.refreshInterval()).isEqualTo(Duration.ofSeconds(37));
        assertThat(fiveMinutes.safetyMargin()).isEqualTo(Duration.ofMinutes(1));
        LeaseTiming subSecond = LeaseTiming.derive("x", Duration.ofMillis(800), 3);
        assertThat(subSecond.refreshInterval()).isEqualTo(Duration.ofMillis(100));
        assertThat(subSecond.safetyMargin()).isEqualTo(Duration.ofMillis(160));
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofMinutes(5)).refreshInterval(null));
        assertThat(r.refreshInterval()).isEqualTo(fiveMinutes.refreshInterval());
    }
}
