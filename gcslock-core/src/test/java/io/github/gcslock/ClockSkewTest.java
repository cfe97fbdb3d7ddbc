package io.github.gcslock;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Clock;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DESIGN.md rule 6: a host whose wall clock is off by ±2 minutes (or GCS's clock as seen from it) neither
 * takes over a live lock nor waits forever for a dead one. Staleness is judged in GCS time, bounded
 * from below by the {@code updated} of replies plus our monotonic clock; the wall clock is never used.
 */
class ClockSkewTest extends EmulatorTestBase {

    private GcsLockRegistry skewed(String where, long offsetSeconds) {
        Duration offset = Duration.ofSeconds(offsetSeconds);
        if (where.equals("gcs")) {
            gcs.clockOffset(offset);
            return registry();
        }
        return registry(b -> b.clock(Clock.offset(Clock.systemUTC(), offset)));
    }

    @ParameterizedTest(name = "{0} clock {1}s")
    @CsvSource({"local,-120", "local,120", "gcs,-120", "gcs,120"})
    void doesNotTakeOverALiveLock(String where, long offsetSeconds) throws Exception {
        GcsLockRegistry contender = skewed(where, offsetSeconds);
        // A TTL the holder keeps on a loaded machine (600 ms lost it there, by its own deadline: right, but not this
        // test's point); the skew of 2 minutes still dwarfs it, so trusting a skewed clock would take it over.
        GcsLockRegistry holder = registry(b -> b.ttl(Duration.ofSeconds(6)).refreshInterval(Duration.ofSeconds(1)));
        Lease lease = holder.acquire("job", Duration.ZERO);
        assertThatThrownBy(() -> contender.acquire("job", Duration.ofMillis(1500)))
                .isInstanceOf(LockNotAcquiredException.class);
        assertThat(lease.isHealthy()).as("the holder's lease, %s", lease.lostReason().orElse("healthy")).isTrue();
        assertThat(contender.inspect("job").orElseThrow().stale()).isFalse();
    }

    @ParameterizedTest(name = "{0} clock {1}s")
    @CsvSource({"local,-120", "local,120", "gcs,-120", "gcs,120"})
    void takesOverADeadLockWithinTtlPlusBackoff(String where, long offsetSeconds) throws Exception {
        GcsLockRegistry contender = skewed(where, offsetSeconds);
        Duration deadTtl = Duration.ofMillis(400);
        plantForeignLock("job", deadTtl);
        // A wait far below the 2-minute skew: trusting the skewed wall clock would time out here.
        Lease lease = contender.acquire("job", Duration.ofSeconds(10));
        assertThat(lease.isHealthy()).isTrue();
    }
}
