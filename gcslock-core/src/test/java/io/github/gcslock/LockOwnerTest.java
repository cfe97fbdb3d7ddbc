package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Rule 17, owners: a hold belongs to a thread (the plain calls) or to an invocation ({@link LockOwner}); only its
 * own owner re-enters it. Against the emulator with the real client.
 */
class LockOwnerTest extends EmulatorTestBase {

    @Test
    void anInvocationsHoldIsNotEnteredByTheThreadThatTookItNorByAnotherInvocation() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(300)));
        LockOwner first = LockOwner.newInvocation("first");
        Lease lease = r.tryAcquire("job", null, first).orElseThrow();
        gcs.faults().resetCounters();
        assertThat(r.tryAcquire("job")).as("the thread that took the invocation's lock").isEmpty();
        assertThat(r.tryAcquire("job", null, LockOwner.currentThread())).isEmpty();
        assertThat(r.tryAcquire("job", null, LockOwner.newInvocation("second"))).as("another invocation").isEmpty();
        assertThat(gcs.faults().objectRequests()).as("refused locally").isZero();
        lease.release();
        assertThat(object("job")).isNull();
    }

    @Test
    void theSameInvocationReentersWithoutARequestAndTheOutermostHoldReleases() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(300)));
        LockOwner invocation = LockOwner.newInvocation("job");
        Lease outer = r.tryAcquire("job", null, invocation).orElseThrow();
        gcs.faults().resetCounters();
        // Another thread running code of the same invocation (a Reactor operator on another worker).
        Lease inner = CompletableFuture.supplyAsync(() -> r.tryAcquire("job", null, invocation)).join().orElseThrow();
        Lease waited = r.acquire("job", Duration.ZERO, null, invocation);
        assertThat(gcs.faults().objectRequests()).isZero();
        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        waited.release();
        inner.release();
        assertThat(object("job")).as("nested holds given back; the outermost still holds").isNotNull();
        CompletableFuture.runAsync(outer::release).join(); // given back by whichever thread completes the work
        assertThat(object("job")).isNull();
        assertThat(r.tryAcquire("job", null, LockOwner.newInvocation("next"))).isPresent().get().satisfies(Lease::release);
    }

    @Test
    void aThreadsHoldIsNotEnteredByAnInvocationThatThreadStarts() {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(300)));
        Lease held = r.tryAcquire("job").orElseThrow();
        assertThat(r.tryAcquire("job", null, LockOwner.newInvocation("async work"))).isEmpty();
        Optional<Lease> nested = r.tryAcquire("job", null, LockOwner.currentThread());
        assertThat(nested).as("the thread as an explicit owner is the plain calls' owner").isPresent();
        assertThat(LockOwner.currentThread()).isEqualTo(LockOwner.currentThread());
        assertThat(LockOwner.newInvocation("a")).isNotEqualTo(LockOwner.newInvocation("a"));
        nested.get().release();
        held.release();
        assertThat(object("job")).isNull();
    }

    @Test
    void anInvocationWaitsForAnotherInvocationsHoldAndGetsItWhenThatIsGivenBack() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(300)));
        Lease first = r.tryAcquire("job", null, LockOwner.newInvocation("first")).orElseThrow();
        CompletableFuture<Lease> second = CompletableFuture.supplyAsync(() -> {
            try {
                return r.acquire("job", Duration.ofSeconds(20), null, LockOwner.newInvocation("second"));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThatThrownBy(() -> r.acquire("job", Duration.ZERO, null, LockOwner.newInvocation("third")))
                .isInstanceOf(LockNotAcquiredException.class);
        assertThat(second).as("waits while another invocation holds the name").isNotDone();
        first.release();
        Lease got = second.get(20, TimeUnit.SECONDS);
        assertThat(got.isHealthy()).isTrue();
        got.release();
        assertThat(object("job")).isNull();
    }

    @Test
    void anInvocationThatWouldWaitForItsOwnThreadsHoldFailsAtOnceInsteadOfWaitingForItself() throws Exception {
        GcsLockRegistry r = registry(b -> b.ttl(Duration.ofSeconds(2)).refreshInterval(Duration.ofMillis(300)));
        Lease held = r.tryAcquire("job").orElseThrow();
        assertThatThrownBy(() -> r.acquire("job", Duration.ofSeconds(3), null, LockOwner.newInvocation("async work")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'job' is held by this thread");
        assertThat(held.isHealthy()).isTrue();
        held.release();
        Lease next = r.acquire("job", Duration.ofSeconds(5), null, LockOwner.newInvocation("async work"));
        next.release();
        assertThat(object("job")).isNull();
    }
}
