package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * DESIGN.md rule 16, the long waiter's poll interval: its cap grows with the time waited (twice it), from the backoff's initial delay, bounded by the backoff's cap and a quarter of the holder's TTL;
 * each interval is jittered within [cap/2, cap]; and no poll comes earlier than two write windows after
 * the holder's last write. A pure function of what it is given: no emulator needed.
 */
class WaitPacingTest {

    private final WaitPacing pacing = new WaitPacing(new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), 2.0),
            Duration.ofSeconds(1), EngineRuntime.REAL);

    @Test
    void theCapGrowsWithTheTimeWaitedWithinItsBounds() {
        Duration fiveMinutes = Duration.ofMinutes(5);
        assertThat(pacing.pollCap(fiveMinutes, 0)).as("first polls stay quick").isEqualTo(Duration.ofSeconds(1));
        assertThat(pacing.pollCap(fiveMinutes, Duration.ofMillis(400).toNanos())).isEqualTo(Duration.ofSeconds(1));
        assertThat(pacing.pollCap(fiveMinutes, Duration.ofMillis(2500).toNanos())).isEqualTo(Duration.ofSeconds(5));
        assertThat(pacing.pollCap(fiveMinutes, Duration.ofSeconds(10).toNanos())).isEqualTo(Duration.ofSeconds(20));
        assertThat(pacing.pollCap(fiveMinutes, Duration.ofHours(3).toNanos())).as("the backoff's cap").isEqualTo(Duration.ofSeconds(30));
        assertThat(pacing.pollCap(Duration.ofSeconds(10), Duration.ofHours(3).toNanos())).as("a quarter of the holder's TTL")
                .isEqualTo(Duration.ofMillis(2500));
        assertThat(pacing.pollCap(null, Duration.ofHours(3).toNanos())).as("TTL unknown").isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void pollsAreJitteredWithinHalfTheCapToTheCap() {
        LockInfo longAgo = holder(Instant.parse("2026-01-01T00:00:00Z"), Duration.ofMinutes(5));
        Instant now = Instant.parse("2026-01-01T01:00:00Z");
        Set<Duration> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            Duration d = pacing.pollDelay(longAgo, now, Duration.ofSeconds(10).toNanos());
            assertThat(d).isBetween(Duration.ofSeconds(10), Duration.ofSeconds(20));
            seen.add(d);
        }
        assertThat(seen).as("jittered, so waiters do not poll together").hasSizeGreaterThan(100);
    }

    @Test
    void noPollEarlierThanTwoWriteWindowsAfterTheHoldersLastWrite() {
        Instant now = Instant.parse("2026-01-01T01:00:00Z");
        LockInfo justWritten = holder(now, Duration.ofMinutes(5));
        for (int i = 0; i < 50; i++) {
            assertThat(pacing.pollDelay(justWritten, now, 0)).isBetween(Duration.ofSeconds(2), Duration.ofMillis(2100));
        }
    }

    private static LockInfo holder(Instant updated, Duration ttl) {
        return new LockInfo("job", "gcslock/job", "other#1", "l1", "host", "1", null, null, null, updated, null, ttl, 1, 1,
                false, false);
    }
}
