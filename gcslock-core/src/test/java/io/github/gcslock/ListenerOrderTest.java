package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** DESIGN.md rule 20: a lock's events reach every listener in order, {@code acquired} first. */
class ListenerOrderTest extends EmulatorTestBase {

    /**
     * The interleaving (found by an independent review): {@code acquired} runs on the acquiring thread
     * (a failure there must reach the caller), after the lease's refreshes were scheduled, while
     * {@code refreshed} and {@code lost} go through the lock's queue on the listener threads. A first
     * listener that is slow in {@code acquired} (an audit write) keeps the acquiring thread busy across a
     * few refreshes, so the second listener saw {@code refreshed, refreshed, refreshed, acquired}.
     * Expected: {@code acquired} first; events raised meanwhile wait for it.
     */
    @Test
    void aLeasesRefreshedEventsNeverArriveBeforeItsAcquiredEvent() {
        List<String> seen = new CopyOnWriteArrayList<>();
        LockEventListener slow = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                sleep(REFRESH.multipliedBy(3).toMillis()); // three refresh intervals
            }
        };
        LockEventListener recorder = new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                seen.add("acquired");
            }

            @Override
            public void refreshed(Lease lease) {
                seen.add("refreshed");
            }
        };
        GcsLockRegistry r = registry(b -> b.listener(slow).listener(recorder));
        Lease lease = r.tryAcquire("event-order").orElseThrow();
        await("the second listener to see a refresh")
                .atMost(Duration.ofSeconds(30)).until(() -> seen.contains("refreshed"));
        assertThat(seen.get(0)).as("events seen by the second listener: %s", seen).isEqualTo("acquired");
        lease.release();
    }
}
