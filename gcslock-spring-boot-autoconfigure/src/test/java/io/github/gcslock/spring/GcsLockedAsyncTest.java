package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@code @GcsLocked} on methods returning a CompletionStage, Mono or Flux: the lock is held until the result
 * completes (value, error or cancellation), SKIP returns an empty result, WAIT does not block the subscriber.
 */
@SpringBootTest(classes = GcsLockedAsyncTest.App.class, properties = {
        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=300ms", "gcslock.backoff.initial=10ms", "gcslock.backoff.max=50ms"})
class GcsLockedAsyncTest {

    static final String BUCKET = SharedEmulator.newBucket();

    @DynamicPropertySource
    static void gcs(DynamicPropertyRegistry r) {
        SharedEmulator.register(r, BUCKET);
    }

    @Autowired
    AsyncJobs jobs;
    @Autowired
    io.github.gcslock.LockRegistry locks;

    private final GcsLockRegistry other = SharedEmulator.otherInstance(BUCKET);

    @AfterEach
    void closeOther() {
        other.close();
    }

    /** Whether another instance could take {@code name} now (and gives it back at once). */
    private boolean freeElsewhere(String name) {
        return other.tryAcquire(name).map(l -> {
            l.release();
            return true;
        }).orElse(false);
    }

    // ------------------------------------------------------------------ CompletionStage

    @Test
    void aCompletableFutureHoldsTheLockUntilItCompletes() throws Exception {
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<String> result = jobs.future(work);
        assertThat(freeElsewhere("future")).as("held while the work runs").isFalse();
        work.complete("done");
        assertThat(result.get()).isEqualTo("done");
        assertThat(freeElsewhere("future")).as("released before the caller sees the result").isTrue();
    }

    @Test
    void aFailedStageReleasesAndPassesTheErrorOn() {
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletionStage<String> result = jobs.stage(work);
        assertThat(freeElsewhere("stage")).isFalse();
        work.completeExceptionally(new IllegalStateException("boom"));
        assertThatThrownBy(() -> result.toCompletableFuture().join()).hasRootCauseMessage("boom");
        assertThat(freeElsewhere("stage")).isTrue();
    }

    @Test
    void cancellingTheReturnedFutureKeepsTheHoldUntilTheWorkEnds() {
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<String> result = jobs.future(work);
        assertThat(freeElsewhere("future")).isFalse();
        result.cancel(true);
        // Cancelling a CompletableFuture never stops the work behind it: the lock stays held until it ends.
        assertThat(result).isCancelled();
        assertThat(work).isNotDone();
        assertThat(freeElsewhere("future")).as("held while the cancelled call's work still runs").isFalse();
        work.complete("done");
        await("'future' to be released once the cancelled call's work ended")
                .atMost(Duration.ofSeconds(30)).until(() -> freeElsewhere("future"));
    }

    @Test
    void aMethodThatThrowsBeforeReturningItsStageReleasesAtOnce() {
        assertThatThrownBy(() -> jobs.future(null)).isInstanceOf(NullPointerException.class);
        assertThat(freeElsewhere("future")).isTrue();
    }

    @Test
    void skipReturnsACompletedEmptyStageWithoutRunningTheMethod() throws Exception {
        Lease held = other.tryAcquire("future").orElseThrow();
        int before = jobs.calls();
        CompletableFuture<String> result = jobs.future(new CompletableFuture<>());
        assertThat(result).isCompleted();
        assertThat(result.get()).isNull();
        assertThat(jobs.calls()).isEqualTo(before);
        held.release();
    }

    // ------------------------------------------------------------------ Reactor

    @Test
    void aMonoTakesTheLockOnSubscriptionAndHoldsItUntilItsValue() {
        int before = jobs.calls();
        Sinks.One<String> sink = Sinks.one();
        Mono<String> mono = jobs.mono(sink);
        assertThat(jobs.calls()).as("invoked at subscription, not before").isEqualTo(before);
        assertThat(freeElsewhere("mono")).as("not taken before subscription").isTrue();

        AtomicReference<String> value = new AtomicReference<>();
        Disposable subscription = mono.subscribe(value::set);
        await("the Mono's method to be invoked at subscription")
                .atMost(Duration.ofSeconds(30)).until(() -> jobs.calls() == before + 1);
        assertThat(freeElsewhere("mono")).as("held while the Mono runs").isFalse();
        sink.tryEmitValue("v");
        await("the Mono's value").atMost(Duration.ofSeconds(30)).until(() -> "v".equals(value.get()));
        await("'mono' to be released after the Mono completed")
                .atMost(Duration.ofSeconds(30)).until(() -> freeElsewhere("mono"));
        subscription.dispose();
    }

    @Test
    void aMonoReleasesOnErrorAndOnCancel() {
        Sinks.One<String> failing = Sinks.one();
        AtomicReference<Throwable> error = new AtomicReference<>();
        jobs.mono(failing).subscribe(v -> { }, error::set);
        await("the failing Mono to take 'mono'").atMost(Duration.ofSeconds(30)).until(() -> !freeElsewhere("mono"));
        failing.tryEmitError(new IllegalStateException("boom"));
        await("the failing Mono's error, and 'mono' to be released")
                .atMost(Duration.ofSeconds(30)).until(() -> error.get() != null && freeElsewhere("mono"));
        assertThat(error.get()).hasMessage("boom");

        Disposable cancelled = jobs.mono(Sinks.one()).subscribe();
        await("the Mono that is then cancelled to take 'mono'")
                .atMost(Duration.ofSeconds(30)).until(() -> !freeElsewhere("mono"));
        cancelled.dispose();
        await("'mono' to be released after its subscriber cancelled")
                .atMost(Duration.ofSeconds(30)).until(() -> freeElsewhere("mono"));
    }

    @Test
    void aFluxHoldsTheLockUntilItCompletesAndSeesItsLeaseInTheContext() {
        Sinks.Many<String> sink = Sinks.many().unicast().onBackpressureBuffer();
        List<String> seen = new CopyOnWriteArrayList<>();
        AtomicReference<Boolean> completed = new AtomicReference<>(false);
        jobs.flux(sink).subscribe(seen::add, e -> { }, () -> completed.set(true));
        await("the Flux's first element, the lease name from its context")
                .atMost(Duration.ofSeconds(30)).until(() -> !seen.isEmpty()); // the lease name, from the context
        assertThat(seen.get(0)).isEqualTo("lease:flux");
        sink.tryEmitNext("a");
        assertThat(freeElsewhere("flux")).isFalse();
        sink.tryEmitComplete();
        await("the Flux to complete").atMost(Duration.ofSeconds(30)).until(completed::get);
        await("'flux' to be released after the Flux completed")
                .atMost(Duration.ofSeconds(30)).until(() -> freeElsewhere("flux"));
        assertThat(seen).containsExactly("lease:flux", "a");
    }

    @Test
    void skipGivesAnEmptyPublisherWithoutRunningTheMethod() {
        int before = jobs.calls();
        Lease held = other.tryAcquire("mono").orElseThrow();
        assertThat(jobs.mono(Sinks.one()).blockOptional(Duration.ofSeconds(5))).isEmpty();
        Lease heldFlux = other.tryAcquire("flux").orElseThrow();
        assertThat(jobs.flux(Sinks.many().unicast().onBackpressureBuffer()).collectList().block(Duration.ofSeconds(5))).isEmpty();
        assertThat(jobs.calls()).isEqualTo(before);
        held.release();
        heldFlux.release();
    }

    @Test
    void waitDoesNotBlockTheSubscribingThread() {
        int before = jobs.calls();
        Lease held = other.tryAcquire("waiting").orElseThrow();
        AtomicReference<String> value = new AtomicReference<>();
        // If subscribe() blocked on the wait, it would not return before the release below: the wait would
        // run out (20 s) and no value would ever come.
        Disposable subscription = jobs.waiting().subscribe(value::set);
        assertThat(value.get()).isNull();
        assertThat(jobs.calls()).as("not invoked before the lock is taken").isEqualTo(before);
        held.release();
        await("the waiting Mono's value after the other holder released 'waiting'")
                .atMost(Duration.ofSeconds(30)).until(() -> value.get() != null);
        assertThat(value.get()).startsWith("ran on boundedElastic");
        subscription.dispose();
    }

    @Test
    void aSubscriberThatCancelsWhileWaitingLeavesNothingHeld() {
        Lease held = other.tryAcquire("waiting").orElseThrow();
        Disposable subscription = jobs.waiting().subscribe();
        subscription.dispose(); // gives up while the lock is still held elsewhere; the wait goes on in the background
        held.release();
        // The background wait takes the lock once it is free; nothing may keep it then (a leak would hold it for good).
        await("'waiting' to stay unheld for 1.5 s after the cancelled wait took it")
                .atMost(Duration.ofSeconds(10)).during(Duration.ofMillis(1500))
                .until(() -> locks.heldLeases().stream().noneMatch(l -> l.name().equals("waiting")));
        assertThat(freeElsewhere("waiting")).isTrue();
    }

    static class AsyncJobs {
        final AtomicInteger calls = new AtomicInteger();

        public int calls() { // through a method: the test sees the proxy, whose own fields are unset
            return calls.get();
        }

        @GcsLocked(name = "future")
        public CompletableFuture<String> future(CompletableFuture<String> work) {
            calls.incrementAndGet();
            return java.util.Objects.requireNonNull(work, "work"); // thrown before a stage is returned
        }

        @GcsLocked(name = "stage")
        public CompletionStage<String> stage(CompletableFuture<String> work) {
            calls.incrementAndGet();
            return work;
        }

        @GcsLocked(name = "mono")
        public Mono<String> mono(Sinks.One<String> sink) {
            calls.incrementAndGet();
            return sink.asMono();
        }

        @GcsLocked(name = "flux")
        public Flux<String> flux(Sinks.Many<String> sink) {
            calls.incrementAndGet();
            return Flux.deferContextual(ctx -> Mono.just("lease:" + ctx.get(Lease.class).name())).concatWith(sink.asFlux());
        }

        @GcsLocked(name = "waiting", ifLocked = IfLocked.WAIT, maxWait = "20s")
        public Mono<String> waiting() {
            calls.incrementAndGet();
            return Mono.fromSupplier(() -> "ran on " + Thread.currentThread().getName());
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        AsyncJobs asyncJobs() {
            return new AsyncJobs();
        }
    }
}
