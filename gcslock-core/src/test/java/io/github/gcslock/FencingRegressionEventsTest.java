package io.github.gcslock;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A lease whose fencing token went down (rule 18: the bucket restored, its generations lower than before) is told
 * {@code fencingTokenRegression}, then {@code acquired}, among the lock's events (rule 20) — also when a listener's
 * {@code fencingTokenRegression} throws an Error: the call fails and its lease is released, and every listener is told
 * {@code acquired} before that release's {@code released} (acquired first among a lease's events; every listener told
 * whatever another threw).
 *
 * <p>Found by the interleaving explorer first (issue 29, e29: the action "the bucket is restored with generations an
 * hour lower" and a hostile listener throwing an Error in fencingTokenRegression), seed 657573908715822 of
 * randomProgramsWithHostileListenersAndInterrupts: {@code p2's listener: released of 'y' token 1767225620247000 before
 * its acquired (rule 20)}. Over an in-memory bucket (the emulator cannot lower its generations without a restart).
 */
class FencingRegressionEventsTest {

    private final InMemoryStorage bucket = new InMemoryStorage("locks", Instant::now);
    private GcsLockRegistry registry;

    @AfterEach
    void close() {
        if (registry != null) {
            registry.close();
        }
    }

    private static final class Recorder implements LockEventListener {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override public void fencingTokenRegression(Lease lease, long highestSeenBefore) { events.add("fencingTokenRegression"); }
        @Override public void acquired(Lease lease) { events.add("acquired"); }
        @Override public void released(Lease lease) { events.add("released"); }
        @Override public void lost(Lease lease, LockLostException reason) { events.add("lost"); }
    }

    @Test
    void anErrorInFencingTokenRegressionHidesNoAcquiredFromAnyListenerAndReleasesTheLease() {
        Recorder first = new Recorder();
        Recorder second = new Recorder();
        LockEventListener failing = new LockEventListener() {
            @Override
            public void fencingTokenRegression(Lease lease, long highestSeenBefore) {
                first.fencingTokenRegression(lease, highestSeenBefore);
                throw new AssertionError("listener broke in fencingTokenRegression");
            }

            @Override public void acquired(Lease lease) { first.acquired(lease); }
            @Override public void released(Lease lease) { first.released(lease); }
        };
        registry = GcsLockRegistry.builder(bucket.storage("p1"), "locks").storageAsGiven().verifyBucket(false)
                .ttl(Duration.ofSeconds(10)).listener(failing).listener(second).build();
        registry.tryAcquire("fenced").orElseThrow().release();
        first.events.clear();
        second.events.clear();
        bucket.restoredWithLowerGenerations(Duration.ofHours(1));

        assertThatThrownBy(() -> registry.tryAcquire("fenced")).isInstanceOf(AssertionError.class)
                .hasMessage("listener broke in fencingTokenRegression");

        await("the failed call's lease released").atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(second.events).contains("released"));
        assertThat(second.events).as("the listener after the failing one: acquired first among the lease's events (rule 20)")
                .containsExactly("fencingTokenRegression", "acquired", "released");
        assertThat(first.events).as("the failing listener itself").containsExactly("fencingTokenRegression", "acquired", "released");
        assertThat(registry.heldLeases()).isEmpty();
        assertThat(bucket.names()).as("nothing left in the bucket").isEmpty();
    }

    /**
     * Found by the interleaving explorer (issue 29, the bucket-restore step; seeds -7496568695166386491,
     * 1420680776011390062, 6585243372559263266, 1478056081458862561 of randomProgramsWithHostileListenersAndInterrupts,
     * about once per hundred schedules): the first listener blocks in {@code fencingTokenRegression} on the acquiring
     * thread; meanwhile the lease's object is deleted (the restored bucket forgets it, an administrator) and a refresh
     * finds it gone. {@code fencingTokenRegression} and {@code acquired} took their places among the lock's events in
     * two steps, so the loss took its place between them, and a listener thread told the second listener
     * {@code [fencingTokenRegression, lost]}, its {@code acquired} only after (rule 20: acquired first among a lease's
     * events). Both take one place now, before the lease's refreshes start.
     */
    @Test
    void aLeaseLostWhileAListenerBlocksInFencingTokenRegressionIsToldAcquiredBeforeLostByTheOthers() throws Exception {
        CountDownLatch inRegression = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        Recorder second = new Recorder();
        LockEventListener blocking = new LockEventListener() {
            @Override
            public void fencingTokenRegression(Lease lease, long highestSeenBefore) {
                inRegression.countDown();
                try {
                    letGo.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        registry = GcsLockRegistry.builder(bucket.storage("p1"), "locks").storageAsGiven().verifyBucket(false)
                .ttl(Duration.ofSeconds(10)).refreshInterval(Duration.ofMillis(50)).listener(blocking).listener(second).build();
        registry.tryAcquire("fenced").orElseThrow().release();
        second.events.clear();
        bucket.restoredWithLowerGenerations(Duration.ofHours(1));

        CompletableFuture<Optional<Lease>> call = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            try {
                call.complete(registry.tryAcquire("fenced"));
            } catch (Throwable t) {
                call.completeExceptionally(t);
            }
        }, "caller");
        caller.start();
        assertThat(inRegression.await(30, TimeUnit.SECONDS)).as("the first listener blocks in fencingTokenRegression").isTrue();
        com.google.cloud.storage.Blob object = bucket.peek("gcslock/fenced");
        assertThat(bucket.deleteAsAdministrator(object.getName(), object.getGeneration())).isTrue();
        await("the second listener told lost while the first blocks").atMost(Duration.ofSeconds(30))
                .until(() -> second.events.contains("lost"));
        List<String> whileBlocked = List.copyOf(second.events);
        letGo.countDown();
        Lease lease = call.get(30, TimeUnit.SECONDS).orElseThrow();
        lease.release();

        assertThat(whileBlocked).as("the second listener, while the first blocks in fencingTokenRegression: acquired first"
                + " among the lease's events (rule 20)").containsExactly("fencingTokenRegression", "acquired", "lost");
        await().atMost(Duration.ofSeconds(30)).until(() -> second.events.contains("released"));
        assertThat(second.events).containsExactly("fencingTokenRegression", "acquired", "lost", "released");
        assertThat(bucket.names()).as("nothing left in the bucket").isEmpty();
    }
}
