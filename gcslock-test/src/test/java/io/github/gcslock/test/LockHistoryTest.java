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
        h.healthy(b, System.nanoTime());
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
        h.healthy(a, System.nanoTime());
        h.ended(a, "released");
        Thread.sleep(1);
        long b = h.acquired("n", "p2", 5);
        h.healthy(b, System.nanoTime());
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

    @Test
    void aLostCallbackBeforeTheNextAcquisitionIsOnTime() throws Exception {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        h.lostCallback(a);
        h.ended(a, "lost");
        Thread.sleep(1);
        long b = h.acquired("n", "p2", 11);
        h.ended(b, "released");
        assertThat(h.violations()).isEmpty();
        assertThat(h.lateLostCallbacks()).isZero();
    }

    @Test
    void detectsALostCallbackAfterAnotherHolderAcquired() throws Exception {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        Thread.sleep(1);
        long b = h.acquired("n", "p2", 11);
        Thread.sleep(1);
        h.lostCallback(a); // the holder hears of its loss only now
        h.ended(a, "lost");
        h.ended(b, "released");
        assertThat(h.violations()).singleElement().asString().startsWith("late lost callback").contains("p1").contains("p2");
        assertThat(h.lateLostCallbacks()).isEqualTo(1);
    }

    @Test
    void detectsALeaseHealthyAfterItsRegistryClosed() throws Exception {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        h.healthy(a, System.nanoTime()); // before close: fine
        h.registryClosed("p1");
        Thread.sleep(1);
        h.healthy(a, System.nanoTime());
        h.healthy(a, System.nanoTime()); // reported once per lease
        h.ended(a, "released");
        assertThat(h.violations()).singleElement().asString().startsWith("healthy after its registry closed");
    }

    @Test
    void detectsTheSameHolderReacquiringDuringHoldAtLeast() throws Exception {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        h.heldAtLeast(a, System.nanoTime() + 60_000_000_000L);
        h.ended(a, "released");
        Thread.sleep(1);
        long b = h.acquired("n", "p1", 10); // a reentrant hold of the same object
        h.ended(b, "released");
        assertThat(h.violations()).anyMatch(v -> v.startsWith("re-acquired during hold-at-least"));
    }

    @Test
    void holdAtLeastEndsWithTheDelayOrALoss() throws Exception {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        h.heldAtLeast(a, System.nanoTime()); // delay over at once
        h.ended(a, "released");
        Thread.sleep(1);
        long b = h.acquired("n", "p1", 11);
        h.heldAtLeast(b, System.nanoTime() + 60_000_000_000L);
        h.lostCallback(b); // lost during the delay: the name is free again
        h.ended(b, "lost");
        Thread.sleep(1);
        long c = h.acquired("n", "p1", 12);
        h.ended(c, "released");
        assertThat(h.violations()).isEmpty();
    }

    @Test
    void reportsLeftoverObjectsAsLeaks() {
        LockHistory h = new LockHistory();
        assertThat(h.leakedObjects()).isZero();
        h.leftover("gcslock/n", "generation 12 owner p1");
        assertThat(h.violations()).singleElement().asString().startsWith("leaked object: gcslock/n");
        assertThat(h.leakedObjects()).isEqualTo(1);
    }

    @Test
    void aLeaseNeverSeenHealthyIsNoHolder() {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 20);
        long b = h.acquired("n", "p2", 10); // handed out past its deadline: its first isHealthy() said false
        h.healthy(a, System.nanoTime());
        h.ended(b, "lost");
        h.ended(a, "released");
        assertThat(h.violations()).isEmpty();
    }

    @Test
    void aLateCallbackToAHolderThatHadAlreadyStoppedIsNotFlagged() throws Exception {
        LockHistory h = new LockHistory();
        long a = h.acquired("n", "p1", 10);
        h.healthy(a, System.nanoTime());
        h.ended(a, "lost"); // the holder saw the loss itself and stopped
        Thread.sleep(1);
        long b = h.acquired("n", "p2", 11);
        h.healthy(b, System.nanoTime());
        Thread.sleep(1);
        h.lostCallback(a);
        h.ended(b, "released");
        assertThat(h.violations()).isEmpty();
    }
}
