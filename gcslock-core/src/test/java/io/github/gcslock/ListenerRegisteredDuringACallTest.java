package io.github.gcslock;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rule 20: a call's {@code acquireFinished} is told to the listeners that were told its {@code acquireStarted} — the
 * ones registered when the call announced itself. A listener added while the call is in flight is told neither end of
 * that call (it is told the call's lease events, {@code acquired} on, as any listener registered by then), and both
 * ends of every later call: never an {@code acquireFinished} without its {@code acquireStarted} (a tracing listener
 * pairs the two). Found by a review of the count the interleaving explorer checks (issue 29: "the recording listener is
 * told the acquireFinished of every call it was told the acquireStarted of").
 */
class ListenerRegisteredDuringACallTest {

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

        @Override public void acquireStarted(String name, AcquireMode mode) { events.add("acquireStarted"); }
        @Override public void acquired(Lease lease) { events.add("acquired"); }
        @Override public void acquireFinished(String name, AcquireOutcome outcome, Duration took) { events.add("acquireFinished"); }
        @Override public void released(Lease lease) { events.add("released"); }
    }

    @Test
    void aListenerAddedWhileACallIsInFlightIsToldNeitherEndOfThatCallAndBothOfTheNext() {
        Recorder late = new Recorder();
        AtomicReference<GcsLockRegistry> reg = new AtomicReference<>();
        AtomicBoolean added = new AtomicBoolean();
        LockEventListener adding = new LockEventListener() {
            @Override
            public void acquireStarted(String name, AcquireMode mode) {
                if (added.compareAndSet(false, true)) {
                    reg.get().addListener(late); // while this call is in flight
                }
            }
        };
        registry = GcsLockRegistry.builder(bucket.storage("p1"), "locks").storageAsGiven().verifyBucket(false)
                .ttl(Duration.ofSeconds(10)).listener(adding).build();
        reg.set(registry);

        registry.tryAcquire("traced").orElseThrow().release();
        await().atMost(Duration.ofSeconds(30)).until(() -> late.events.contains("released"));
        assertThat(late.events).as("added during the call: its lease's events, neither end of the call (rule 20)")
                .containsExactly("acquired", "released");

        registry.tryAcquire("traced").orElseThrow().release();
        await().atMost(Duration.ofSeconds(30)).until(() -> late.events.stream().filter("released"::equals).count() == 2);
        assertThat(late.events).as("the next call: both ends")
                .containsExactly("acquired", "released", "acquireStarted", "acquired", "acquireFinished", "released");
    }
}
