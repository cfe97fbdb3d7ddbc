package io.github.gcslock.test;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The checker finds what it is meant to find. */
class LockHistoryTest {

    @Test
    void aCleanHistoryHasNoViolations() throws Exception {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        h.healthy(a, System.nanoTime());
        assertThat(h.fencedWrite("n", 10)).isTrue();
        h.ended(a, "released");
        Thread.sleep(1);
        long b = h.acquired("n", "p2", 11);
        h.healthy(b, System.nanoTime());
        assertThat(h.fencedWrite("n", 11)).isTrue();
        h.ended(b, "released");
        assertThat(h.violations()).isEmpty();
        assertThat(h.acquisitions()).isEqualTo(2);
    }

    @Test
    void detectsTwoHealthyLeasesAtOnce() {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        long b = h.acquired("n", "p2", 11);
        h.healthy(a, System.nanoTime());
        h.ended(a, "released");
        h.ended(b, "released");
        assertThat(h.violations()).singleElement().asString().startsWith("overlap").contains("p1").contains("p2");
        assertThat(h.overlaps()).isEqualTo(1);
    }

    @Test
    void leasesOfDifferentNamesMayOverlap() {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        long b = h.acquired("m", "p2", 11);
        h.healthy(a, System.nanoTime());
        h.ended(a, "released");
        h.ended(b, "released");
        assertThat(h.violations()).isEmpty();
    }

    @Test
    void rejectsAndCountsStaleFencedWritesAndFlagsShrinkingTokens() throws Exception {
        LockHistory h = new LockHistory();
        assertThat(h.fencedWrite("n", 20)).isTrue();
        assertThat(h.fencedWrite("n", 19)).isFalse();
        assertThat(h.rejectedWrites()).isEqualTo(1);
        long a = h.acquired("n", "p1", 20);
        h.ended(a, "released");
        Thread.sleep(1);
        long b = h.acquired("n", "p2", 5);
        h.ended(b, "lost");
        assertThat(h.violations()).anyMatch(v -> v.startsWith("fencing token did not grow"));
        assertThat(h.lostLeases()).isEqualTo(1);
    }

    @Test
    void flagsLeasesThatNeverEnded() {
        LockHistory h = new LockHistory();
        h.acquired("n", "p1", 1);
        assertThat(h.violations()).singleElement().asString().startsWith("never ended");
    }
}
