package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.LockRegistry;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One invocation, one hold: a {@code @GcsLocked} method whose work finishes on another thread (a
 * CompletableFuture, a Mono or Flux) holds its lock for that invocation, never for the thread that happened to
 * take it, so a second invocation while it runs is "held" (skipped here) — from the same thread, from the pooled
 * thread that took the first one's lock, and when the same returned Mono is subscribed to again.
 */
@SpringBootTest(classes = OneInvocationOneHoldTest.App.class, properties = {
        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=300ms", "gcslock.backoff.initial=10ms", "gcslock.backoff.max=50ms"})
class OneInvocationOneHoldTest {

    static final String BUCKET = SharedEmulator.newBucket();

    @DynamicPropertySource
    static void gcs(DynamicPropertyRegistry r) {
        SharedEmulator.register(r, BUCKET);
    }

    @Autowired
    Jobs jobs;
    @Autowired
    LockRegistry locks;

    private final GcsLockRegistry other = SharedEmulator.otherInstance(BUCKET);
    private final List<Disposable> subscriptions = new ArrayList<>();

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        await("every lease to be released after the test's subscriptions were disposed")
                .atMost(Duration.ofSeconds(30)).until(() -> locks.heldLeases().isEmpty());
        other.close();
    }

    @Test
    void aSecondCompletableFutureCallOnTheSameThreadWhileTheFirstRunsIsSkipped() throws Exception {
        int before = jobs.calls("future");
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> firstResult = jobs.future(first);
        // The next tick of a single-thread scheduler: the same thread calls again while the first run goes on.
        CompletableFuture<String> second = jobs.future(new CompletableFuture<>());
        assertThat(jobs.running("future")).as("bodies of 'future' running at once").isEqualTo(1);
        assertThat(second).as("the second call was skipped: a completed empty result").isCompletedWithValue(null);
        assertThat(jobs.calls("future") - before).isEqualTo(1);
        first.complete("done");
        assertThat(firstResult.get()).isEqualTo("done");
    }

    @Test
    void monoSubscriptionsWhileOneHoldsAreSkippedWhicheverPooledThreadTakesThem() {
        int before = jobs.calls("mono");
        Sinks.One<String> firstWork = Sinks.one();
        subscriptions.add(jobs.mono(firstWork).subscribe());
        await("the first subscription's body to run")
                .atMost(Duration.ofSeconds(30)).until(() -> jobs.calls("mono") == before + 1);
        // Each later acquisition runs on a boundedElastic worker; an idle one (the first acquisition's among
        // them) is reused: under thread ownership that thread "held" the lock and ran the body again.
        for (int i = 0; i < 5; i++) {
            assertThat(jobs.mono(Sinks.one()).blockOptional(Duration.ofSeconds(5))).as("call %d skipped", i + 2).isEmpty();
        }
        assertThat(jobs.calls("mono") - before).as("bodies run while the first holds the lock").isEqualTo(1);
        assertThat(jobs.maxRunning("mono")).as("bodies of 'mono' running at once, at most").isEqualTo(1);
        firstWork.tryEmitValue("v");
    }

    @Test
    void reSubscribingTheSameMonoWhileItsFirstSubscriptionHoldsTheLockIsSkipped() {
        int before = jobs.calls("mono");
        Sinks.One<String> work = Sinks.one();
        Mono<String> mono = jobs.mono(work);
        subscriptions.add(mono.subscribe());
        await("the first subscription's body to run")
                .atMost(Duration.ofSeconds(30)).until(() -> jobs.calls("mono") == before + 1);
        for (int i = 0; i < 3; i++) {
            AtomicBoolean done = new AtomicBoolean();
            subscriptions.add(mono.subscribe(v -> { }, e -> done.set(true), () -> done.set(true)));
            await("a later subscription, skipped, to complete").atMost(Duration.ofSeconds(30)).untilTrue(done);
        }
        assertThat(jobs.calls("mono") - before).as("the same Mono's body while its first subscription holds the lock").isEqualTo(1);
        work.tryEmitValue("v");
    }

    @Test
    void fluxSubscriptionsWhileOneHoldsAreSkipped() {
        int before = jobs.calls("flux");
        Sinks.Many<String> firstWork = Sinks.many().unicast().onBackpressureBuffer();
        Flux<String> flux = jobs.flux(firstWork);
        subscriptions.add(flux.subscribe());
        await("the first subscription's body to run")
                .atMost(Duration.ofSeconds(30)).until(() -> jobs.calls("flux") == before + 1);
        for (int i = 0; i < 3; i++) {
            assertThat(jobs.flux(Sinks.many().unicast().onBackpressureBuffer()).collectList().block(Duration.ofSeconds(5))).isEmpty();
            assertThat(flux.collectList().block(Duration.ofSeconds(5))).as("re-subscribed").isEmpty();
        }
        assertThat(jobs.calls("flux") - before).isEqualTo(1);
        firstWork.tryEmitComplete();
    }

    @Test
    void aLockedMonoSubscribedInsideTheChainOfTheSubscriptionHoldingItsNameIsAReentrantHoldOfThatSubscription() {
        // The documented choice: the holder's Reactor Context reaches a publisher subscribed inside its chain, and
        // that publisher cannot outlive the outer hold (usingWhen releases after it terminates).
        assertThat(jobs.outer(() -> jobs.inner()).block(Duration.ofSeconds(10))).isEqualTo("inner ran");
        // Outside that chain, the same call while a subscription holds the name is skipped.
        Sinks.One<String> held = Sinks.one();
        subscriptions.add(jobs.outer(held::asMono).subscribe());
        await("the outer subscription to hold 'nested'")
                .atMost(Duration.ofSeconds(30)).until(() -> locks.heldLeases().stream().anyMatch(l -> l.name().equals("nested")));
        assertThat(jobs.inner().blockOptional(Duration.ofSeconds(5))).isEmpty();
        held.tryEmitValue("v");
    }

    static class Jobs {
        private final java.util.Map<String, AtomicInteger> calls = new java.util.concurrent.ConcurrentHashMap<>();
        private final java.util.Map<String, AtomicInteger> running = new java.util.concurrent.ConcurrentHashMap<>();
        private final java.util.Map<String, AtomicInteger> maxRunning = new java.util.concurrent.ConcurrentHashMap<>();

        public int calls(String name) {
            return counter(calls, name).get();
        }

        public int running(String name) {
            return counter(running, name).get();
        }

        public int maxRunning(String name) {
            return counter(maxRunning, name).get();
        }

        private static AtomicInteger counter(java.util.Map<String, AtomicInteger> m, String name) {
            return m.computeIfAbsent(name, n -> new AtomicInteger());
        }

        private void enter(String name) {
            counter(calls, name).incrementAndGet();
            int now = counter(running, name).incrementAndGet();
            counter(maxRunning, name).accumulateAndGet(now, Math::max);
        }

        private void leave(String name) {
            counter(running, name).decrementAndGet();
        }

        @GcsLocked("future")
        public CompletableFuture<String> future(CompletableFuture<String> work) {
            enter("future");
            return work.whenComplete((v, e) -> leave("future"));
        }

        @GcsLocked("mono")
        public Mono<String> mono(Sinks.One<String> work) {
            enter("mono");
            return work.asMono().doFinally(s -> leave("mono"));
        }

        @GcsLocked("nested")
        public Mono<String> outer(java.util.function.Supplier<Mono<String>> inner) {
            return Mono.defer(inner);
        }

        @GcsLocked("nested")
        public Mono<String> inner() {
            return Mono.just("inner ran");
        }

        @GcsLocked("flux")
        public Flux<String> flux(Sinks.Many<String> work) {
            enter("flux");
            return work.asFlux().doFinally(s -> leave("flux"));
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Jobs jobs() {
            return new Jobs();
        }
    }
}
