package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link LockEventListener#requestAnswered} and {@link LockEventListener#requestFailed}: every request of every path
 * reports its outcome once (the one place a reachability tracker needs), and a call that sends nothing reports nothing.
 */
class RequestOutcomeEventsTest extends EmulatorTestBase {

    /** "answered:name" or "failed:name" per request, in order. */
    private final List<String> outcomes = new CopyOnWriteArrayList<>();

    private GcsLockRegistry recorded() {
        return registry(b -> b.listener(new LockEventListener() {
            @Override
            public void requestAnswered(String name) {
                outcomes.add("answered:" + name);
            }

            @Override
            public void requestFailed(String name, GcsLockException error) {
                assertThat(error.getMessage()).contains("could not reach GCS");
                outcomes.add("failed:" + name);
            }
        }).refreshInterval(Duration.ofSeconds(5)).ttl(Duration.ofSeconds(30)));
    }

    @Test
    void acquireReleaseInspectAndListEachReportTheirAnsweredRequests() {
        GcsLockRegistry r = recorded();
        Lease lease = r.tryAcquire("job").orElseThrow();
        assertThat(outcomes).isNotEmpty().allMatch(o -> o.equals("answered:job"));
        outcomes.clear();
        lease.release();
        assertThat(outcomes).containsExactly("answered:job");
        outcomes.clear();
        assertThat(r.inspect("job")).isEmpty(); // a 404 is an answer
        r.list();
        assertThat(outcomes).containsExactly("answered:job", "answered:null");
    }

    @Test
    void aLockHeldElsewhereIsAnAnswerAndAnOutageIsAFailure() {
        GcsLockRegistry r = recorded();
        GcsLockRegistry other = holder();
        Lease held = other.tryAcquire("busy").orElseThrow();
        assertThat(r.tryAcquire("busy")).isEmpty();
        assertThat(outcomes).isNotEmpty().allMatch(o -> o.equals("answered:busy"));
        held.release();
        outcomes.clear();
        gcs.faults().failNext(100_000, 503);
        assertThatThrownBy(() -> r.tryAcquire("down")).isInstanceOf(GcsLockException.class);
        assertThat(outcomes).isNotEmpty().allMatch(o -> o.equals("failed:down"));
    }

    @Test
    void aReentrantHoldSendsNothingAndReportsNothing() throws Exception {
        GcsLockRegistry r = recorded();
        Lease outer = r.acquire("nested", Duration.ZERO);
        outcomes.clear();
        Lease inner = r.acquire("nested", Duration.ZERO);
        inner.release();
        assertThat(outcomes).isEmpty();
        outer.release();
        assertThat(outcomes).containsExactly("answered:nested");
    }

    @Test
    void aFailedRefreshIsReportedOffTheRefresherThread() {
        GcsLockRegistry r = registry(b -> b.listener(new LockEventListener() {
            @Override
            public void requestFailed(String name, GcsLockException error) {
                assertThat(Thread.currentThread().getName()).startsWith("gcslock-events-");
                outcomes.add("failed:" + name);
            }
        }));
        r.tryAcquire("refreshed").orElseThrow();
        gcs.faults().failNext(100_000, 503, io.github.gcslock.test.Operation.PATCH); // past the client's own retries
        await("a requestFailed event for the refresh that failed past the client's retries")
                .atMost(Duration.ofSeconds(30)).until(() -> outcomes.contains("failed:refreshed"));
    }
    @Test
    void everyRequestIsStampedInTheOrderItWasSentAcrossRegistries() {
        List<RequestOutcome> stamped = new CopyOnWriteArrayList<>();
        LockEventListener stamps = new LockEventListener() {
            @Override
            public void requestCompleted(RequestOutcome outcome) {
                stamped.add(outcome);
            }
        };
        GcsLockRegistry a = registry(b -> b.listener(stamps));
        GcsLockRegistry b = registry(x -> x.listener(stamps));
        stamped.clear();
        for (int i = 0; i < 3; i++) { // one request each, one after the other, alternating registries
            a.inspect("a" + i);
            b.inspect("b" + i);
        }
        assertThat(stamped).extracting(RequestOutcome::name).containsExactly("a0", "b0", "a1", "b1", "a2", "b2");
        assertThat(stamped).extracting(RequestOutcome::sequence).isSorted().doesNotHaveDuplicates();
        assertThat(stamped).allMatch(RequestOutcome::answered);
        long before = RequestOutcome.nextSequence();
        gcs.faults().failNext(100_000, 503);
        assertThatThrownBy(() -> a.inspect("down")).isInstanceOf(GcsLockException.class);
        RequestOutcome failed = stamped.get(stamped.size() - 1);
        assertThat(failed.answered()).isFalse();
        assertThat(failed.error()).hasMessageContaining("could not reach GCS");
        assertThat(failed.sequence()).as("taken after a number taken before the request").isGreaterThan(before);
    }

    @Test
    void aListenerThatOverridesOnlyTheOldMethodsIsToldAsBefore() {
        GcsLockRegistry r = recorded(); // overrides requestAnswered and requestFailed only
        r.inspect("old");
        gcs.faults().failNext(100_000, 503);
        assertThatThrownBy(() -> r.inspect("old")).isInstanceOf(GcsLockException.class);
        assertThat(outcomes).startsWith("answered:old").endsWith("failed:old");
    }
}
