package io.github.gcslock;

import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Rule 14 for acquisitions under way when close() runs: close() returns only once every create in flight has ended
 * (its lease handed out and released by close(), or its object deleted again), and no create is sent once the
 * registry is closed. Otherwise an object of ours lands after close() returned, and stays for its TTL if the process
 * exits then (the usual thing after close()).
 */
class CloseDuringCreateTest extends EmulatorTestBase {

    /** Calls that hold a request for a second must not time out meanwhile. */
    private GcsLockRegistry patient() {
        return registry(b -> b.ttl(Duration.ofSeconds(20)).refreshInterval(Duration.ofSeconds(2)).operationTimeout(Duration.ofSeconds(5)));
    }

    /**
     * Found by {@code EngineInterleavingExplorerTest} (issue 29, random seed 3244478702270568725 of the hostile programs:
     * "every registry closed, yet the bucket holds [gcslock/x]"): a create sent as close() began landed after close()
     * returned. Here the emulator holds the create until close() has had time to return.
     */
    @Test
    void closeReturnsOnlyOnceACreateInFlightHasEndedAndLeavesNoObject() throws Exception {
        GcsLockRegistry r = patient();
        CountDownLatch createArrived = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.INSERT, () -> { // an INSERT names no object here
            createArrived.countDown();
            await(letGo);
        });
        CompletableFuture<Optional<Lease>> acquiring = CompletableFuture.supplyAsync(() -> r.tryAcquire("job"));
        assertThat(createArrived.await(20, TimeUnit.SECONDS)).as("the create arrived").isTrue();

        CompletableFuture<Void> closing = CompletableFuture.runAsync(r::close);
        sleep(500);
        assertThat(closing).as("close() while the create is in flight").isNotDone();
        letGo.countDown();
        closing.get(30, TimeUnit.SECONDS);
        assertThat(object("job")).as("the object when close() returned").isNull();
        assertThatThrownBy(() -> acquiring.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(object("job")).as("the object once the acquiring call ended").isNull();
    }

    /**
     * An attempt that began before close() and was reading when close() ran: its read answers "free" once close() has
     * begun, and it must not create then (its object would land after close() returned).
     */
    @Test
    void anAttemptWhoseReadEndsAfterCloseSendsNoCreate() throws Exception {
        GcsLockRegistry other = holder();
        Lease held = other.tryAcquire("job").orElseThrow();
        GcsLockRegistry r = patient();
        assertThat(r.tryAcquire("job")).as("held by the other process").isEmpty();
        held.release(); // r last saw the name held: a waiter's look at it is a read (rule 16)

        CountDownLatch readArrived = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        gcs.faults().beforeNext(Operation.GET, "gcslock/job", () -> {
            readArrived.countDown();
            await(letGo);
        });
        gcs.faults().resetCounters();
        CompletableFuture<Lease> acquiring = CompletableFuture.supplyAsync(() -> {
            try {
                return r.acquire("job", Duration.ofSeconds(10));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertThat(readArrived.await(20, TimeUnit.SECONDS)).as("the waiter's read arrived").isTrue();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(r::close);
        sleep(300);
        letGo.countDown();
        closing.get(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> acquiring.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(inserts()).as("creates sent by the attempt whose read ended after close()").isZero();
        assertThat(object("job")).isNull();
    }

    /**
     * close() called by a listener of the create's own request, on the acquiring thread: it does not wait for that
     * create (it cannot end while close() waits), so the call ends at once instead of after close()'s whole bound.
     */
    @Test
    void closeOnTheAcquiringThreadDoesNotWaitForItsOwnCreate() throws Exception {
        GcsLockRegistry r = patient(); // close()'s bound: 8 x 5 s + 4 windows
        AtomicReference<Thread> acquiringThread = new AtomicReference<>();
        r.addListener(new LockEventListener() {
            @Override
            public void requestAnswered(String name) {
                if ("job".equals(name) && Thread.currentThread() == acquiringThread.get()) {
                    r.close();
                }
            }
        });
        CompletableFuture<Object> acquiring = CompletableFuture.supplyAsync(() -> {
            acquiringThread.set(Thread.currentThread());
            try {
                return r.tryAcquire("job");
            } catch (Throwable e) {
                return e;
            }
        });
        Object outcome = acquiring.get(20, TimeUnit.SECONDS); // well under close()'s bound of 40 s
        assertThat(outcome).isInstanceOf(IllegalStateException.class);
        assertThat(((Throwable) outcome).getMessage()).contains("closed");
        assertThat(object("job")).as("the object once the call ended").isNull();
    }

    /**
     * The create ends once its lease is registered, before any listener is told: close() on another thread while the
     * acquiring thread's {@code acquired} listener blocks releases the lease and returns, without waiting for it.
     */
    @Test
    void closeDoesNotWaitForAnAcquiredListenerOfTheCreatesLease() throws Exception {
        GcsLockRegistry r = patient();
        CountDownLatch inAcquired = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        r.addListener(new LockEventListener() {
            @Override
            public void acquired(Lease lease) {
                inAcquired.countDown();
                CloseDuringCreateTest.await(letGo);
            }
        });
        try {
            CompletableFuture<Optional<Lease>> acquiring = CompletableFuture.supplyAsync(() -> r.tryAcquire("job"));
            assertThat(inAcquired.await(20, TimeUnit.SECONDS)).as("the acquired listener runs").isTrue();
            CompletableFuture.runAsync(r::close).get(15, TimeUnit.SECONDS); // well under close()'s bound of 40 s
            assertThat(object("job")).as("the object when close() returned").isNull();
            letGo.countDown();
            acquiring.get(20, TimeUnit.SECONDS);
        } finally {
            letGo.countDown();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS); // past every bound above: only the test lets it go
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
