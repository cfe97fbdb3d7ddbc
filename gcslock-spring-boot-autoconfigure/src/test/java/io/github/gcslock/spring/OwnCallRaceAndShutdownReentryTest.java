package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two promises of the README's "Async and reactive methods" at the timings where a loaded machine broke them
 * (issue 26's long run, InvocationOwnershipPropertyTest), made deterministic here:
 * <ul>
 * <li>a caller's own finished call never makes its next call skip or fail, also when the caller gave up (a
 * {@code timeout}) while the method's own code still ran, or while the lock of a completed call was being given
 * back;</li>
 * <li>nested calls of the same name re-enter the enclosing hold in every mode, also once the application context
 * is closing (closing ends waits; a reentrant call does not wait).</li>
 * </ul>
 */
class OwnCallRaceAndShutdownReentryTest {

    private static final GcsEmulator GCS = SharedEmulator.GCS;
    private static final String BUCKET = SharedEmulator.newBucket();
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** The application's own executor (work a future-returning method starts with supplyAsync). */
    private static final ExecutorService APP = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "app-executor");
        t.setDaemon(true);
        return t;
    });

    private final ClientFaults faults;
    private final GcsLockRegistry registry;
    private final GcsLockedWaits waits = new GcsLockedWaits();
    private final Jobs jobs;

    OwnCallRaceAndShutdownReentryTest() {
        String client = "own-call-race-" + INSTANCES.incrementAndGet();
        faults = GCS.faults().client(client);
        faults.reset();
        // No refresh within a test (the next request after the body is its release), no write window (the
        // emulator has no write limit here).
        registry = GcsLockRegistry.builder(GCS.storage(client), BUCKET).ttl(Duration.ofSeconds(20))
                .refreshInterval(Duration.ofSeconds(5)).operationTimeout(Duration.ofSeconds(5))
                .backoff(Duration.ofMillis(10), Duration.ofMillis(100), 2).writeRateWindow(Duration.ZERO).build();
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        beans.registerSingleton("registry", registry);
        beans.registerSingleton("waits", waits);
        GcsLockedInterceptor interceptor = new GcsLockedInterceptor(beans.getBeanProvider(LockRegistry.class),
                new StandardEnvironment(), beans, event -> { }, () -> Duration.ZERO,
                beans.getBeanProvider(GcsLockedAcquireListener.class));
        interceptor.setWaits(beans.getBeanProvider(GcsLockedWaits.class));
        ProxyFactory factory = new ProxyFactory(new Jobs());
        factory.setProxyTargetClass(true);
        factory.addAdvisor(new org.springframework.aop.support.DefaultPointcutAdvisor(
                new org.springframework.aop.support.annotation.AnnotationMatchingPointcut(null, GcsLocked.class, true), interceptor));
        jobs = (Jobs) factory.getProxy();
    }

    @AfterEach
    void tearDown() {
        faults.reset();
        await("every lease to be released").atMost(Duration.ofSeconds(30)).until(() -> registry.heldLeases().isEmpty());
        registry.close();
    }

    @Test
    void aCallerWhoTimesOutWhileTheMethodsOwnCodeRunsIsNotRefusedByThatCallWhenItCallsAgain() {
        // The caller's timeout fires while the first call's method is still in its own code (before it returned its
        // Mono): Reactor's usingWhen defers that cancel until the method returned, so the caller's error, and its
        // next call, come before the first call's release has even begun.
        Sinks.One<String> inItsOwnCode = Sinks.one();
        AtomicInteger ran = new AtomicInteger();
        String result = jobs.monoFail("own-code", () -> {
                    ran.incrementAndGet();
                    inItsOwnCode.tryEmitValue("now");
                    sleep(500);
                })
                .timeout(inItsOwnCode.asMono())
                .onErrorResume(TimeoutException.class, e -> jobs.monoFail("own-code", ran::incrementAndGet))
                .block(Duration.ofSeconds(30));
        assertThat(result).as("the caller's next call, made as its first call timed out").isEqualTo("ran");
        assertThat(ran).as("the method's runs").hasValue(2);
    }

    @Test
    void aNestedPublisherTheMethodsOwnCodeBlocksOnDoesNotWaitForTheEnclosingCallsPendingRelease() {
        // As above, the caller times out while the method's own code runs; that code then blocks on a publisher of
        // the same name (SKIP). The enclosing subscription's release is pending from the cancel, and cannot begin
        // before this code returns: the nested call must not wait for it (it finds the name held, at once).
        Sinks.One<String> inItsOwnCode = Sinks.one();
        AtomicReference<Optional<String>> nested = new AtomicReference<>();
        AtomicLong nestedMillis = new AtomicLong(-1);
        String result = jobs.monoFail("own-code-nested", () -> {
                    inItsOwnCode.tryEmitValue("now");
                    long t0 = System.nanoTime();
                    nested.set(jobs.monoSkip("own-code-nested", () -> Mono.just("ran")).blockOptional(Duration.ofSeconds(60)));
                    nestedMillis.set((System.nanoTime() - t0) / 1_000_000);
                })
                .timeout(inItsOwnCode.asMono())
                .onErrorResume(TimeoutException.class, e -> Mono.just("timed out"))
                .block(Duration.ofSeconds(30));
        assertThat(result).isEqualTo("timed out");
        await("the method's own code to return").atMost(Duration.ofSeconds(60)).until(() -> nestedMillis.get() >= 0);
        assertThat(nested.get()).as("the nested SKIP publisher: the name is held by the enclosing call").isEmpty();
        assertThat(nestedMillis.get()).as("ms the nested call took (it must not wait for the enclosing call's release)")
                .isLessThan(5_000);
    }

    @Test
    void aCallerWhoDisposesWhileTheMethodsOwnCodeBlocksOnANestedPublisherLeavesNoLockHeldAndIsNotRefusedWhenItCallsAgain()
            throws Exception {
        // The caller disposes its subscription (from another thread) as the method's own code begins; that code then
        // blocks on a publisher of the same name (SKIP), and the caller calls again the moment its dispose returned.
        // The nested call decides at once (the name is held by the enclosing call), the enclosing call's lock is given
        // back once its own code returned, and the caller's next call runs.
        AtomicReference<Disposable> first = new AtomicReference<>();
        CountDownLatch inItsOwnCode = new CountDownLatch(1);
        CountDownLatch disposed = new CountDownLatch(1);
        AtomicReference<Optional<String>> nested = new AtomicReference<>();
        first.set(jobs.monoSkip("disposed-own-code", () -> {
            inItsOwnCode.countDown();
            awaitLatch(disposed);
            nested.set(jobs.monoSkip("disposed-own-code", () -> Mono.just("nested")).blockOptional(Duration.ofSeconds(60)));
            return Mono.just("first");
        }).subscribe());
        assertThat(inItsOwnCode.await(30, TimeUnit.SECONDS)).as("the method's own code began").isTrue();
        await("the subscription to be known").atMost(Duration.ofSeconds(30)).until(() -> first.get() != null);
        first.get().dispose();
        disposed.countDown();
        long t0 = System.nanoTime();
        String again = jobs.monoSkip("disposed-own-code", () -> Mono.just("again")).block(Duration.ofSeconds(60));
        long againMillis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(again).as("the caller's next call, made as its dispose returned").isEqualTo("again");
        assertThat(againMillis).as("ms the caller's next call took").isLessThan(5_000);
        assertThat(nested.get()).as("the nested SKIP publisher: the name is held by the enclosing call").isEmpty();
        await("every lease to be released after the calls ended").atMost(Duration.ofSeconds(5))
                .until(() -> registry.heldLeases().isEmpty());
    }

    @Test
    void aCallerWhoseCancelIsHeardInPiecesAroundItsAcquisitionIsNotRefusedByThatCallWhenItCallsAgain() throws Exception {
        // A cancel travels up the chain on the canceller's thread: gcslock hears it first outside Reactor's usingWhen,
        // then usingWhen, then the acquisition. On a loaded machine that thread may stop between the two for as long
        // as an acquisition takes (the long run of InvocationOwnershipPropertyTest: 'B MONO FAIL x via
        // TIMEOUT_RETRY(4 ms) with nested MONO_BLOCK SKIP', its retry refused as its timeout fired: 'Reactor dropped an
        // error: LockNotAcquiredException'). Here: the caller disposes before the acquisition began; the cancel is held
        // just past gcslock's outer hearing of it; the acquisition then runs, usingWhen takes the lock over and the
        // method's own code runs (blocking, as on a nested call). The cancel then reaches usingWhen (which defers it:
        // the own code runs), the dispose returns, and the caller calls again at once.
        String name = "cancel-in-pieces";
        CountDownLatch acquisitionMayStart = new CountDownLatch(1);
        CountDownLatch settled = new CountDownLatch(1); // the acquisition ended, or the method's own code runs
        CountDownLatch cancelHeardOutside = new CountDownLatch(1);
        CountDownLatch cancelMayGoOn = new CountDownLatch(1);
        CountDownLatch ownCodeMayReturn = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        List<Throwable> dropped = new java.util.concurrent.CopyOnWriteArrayList<>();
        ThreadLocal<Boolean> armed = ThreadLocal.withInitial(() -> false);
        reactor.core.publisher.Hooks.onErrorDropped(dropped::add);
        // The acquisition (scheduled by the subscribing thread) starts when the test says so.
        reactor.core.scheduler.Schedulers.onScheduleHook(PIECES, task -> !armed.get() ? task : () -> {
            awaitLatch(acquisitionMayStart);
            try {
                task.run();
            } finally {
                settled.countDown();
            }
        });
        // The canceller stops between gcslock's outer hearing of the cancel and usingWhen.
        reactor.core.publisher.Hooks.onEachOperator(PIECES, reactor.core.publisher.Operators.lift(
                sc -> armed.get() && sc.getClass().getSimpleName().equals("MonoUsingWhen"),
                (sc, actual) -> new HeldCancel<>(actual, cancelHeardOutside, cancelMayGoOn)));
        try {
            Disposable first;
            armed.set(true);
            try {
                first = jobs.monoFail(name, () -> {
                    ran.incrementAndGet();
                    settled.countDown();
                    awaitLatch(ownCodeMayReturn);
                }).subscribe();
            } finally {
                armed.set(false);
            }
            CompletableFuture<Void> disposing = CompletableFuture.runAsync(first::dispose, APP);
            assertThat(cancelHeardOutside.await(30, TimeUnit.SECONDS)).as("the cancel passed gcslock's outer operator").isTrue();
            acquisitionMayStart.countDown();
            assertThat(settled.await(30, TimeUnit.SECONDS)).as("the acquisition ended, or the method's own code runs").isTrue();
            cancelMayGoOn.countDown();
            disposing.get(30, TimeUnit.SECONDS);
            CompletableFuture<String> again = jobs.monoFail(name, ran::incrementAndGet).toFuture();
            ownCodeMayReturn.countDown();
            assertThat(again).as("the caller's next call, made as its dispose returned")
                    .succeedsWithin(Duration.ofSeconds(30)).isEqualTo("ran");
            assertThat(dropped).as("errors Reactor dropped (logged at ERROR)").isEmpty();
        } finally {
            cancelMayGoOn.countDown();
            acquisitionMayStart.countDown();
            ownCodeMayReturn.countDown();
            reactor.core.scheduler.Schedulers.resetOnScheduleHook(PIECES);
            reactor.core.publisher.Hooks.resetOnEachOperator(PIECES);
            reactor.core.publisher.Hooks.resetOnErrorDropped();
        }
    }

    @Test
    void aRefusalWhoseSubscriberLeavesOnItsWayOutIsToldToNobodyAndNotDroppedByReactor() throws Exception {
        // InvocationOwnershipPropertyTest's long run: 'A MONO FAIL x via TIMEOUT_RETRY(17 ms) ...' refused (the name held
        // by another caller's call, rightly) as its timeout fired: 'Reactor dropped an error (logged as ERROR):
        // LockNotAcquiredException'. usingWhen took the refusal over while the subscriber was there; the subscriber left
        // while the error was on its way out of usingWhen. Here the error is held there until gcslock heard the
        // subscriber leave (its dispose returned): gcslock must not signal its refusal after that.
        String name = "refusal-crosses-cancel";
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch holderMayEnd = new CountDownLatch(1);
        CountDownLatch errorOutOfUsingWhen = new CountDownLatch(1);
        CountDownLatch errorMayGoOn = new CountDownLatch(1);
        CountDownLatch errorPassed = new CountDownLatch(1);
        List<Throwable> dropped = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicReference<Throwable> told = new AtomicReference<>();
        reactor.core.publisher.Hooks.onErrorDropped(dropped::add);
        Disposable holder = jobs.monoFail(name, () -> {
            holding.countDown();
            awaitLatch(holderMayEnd);
        }).subscribe();
        try {
            assertThat(holding.await(30, TimeUnit.SECONDS)).as("another call holds the name").isTrue();
            ThreadLocal<Boolean> armed = ThreadLocal.withInitial(() -> false);
            reactor.core.publisher.Hooks.onEachOperator(PIECES, reactor.core.publisher.Operators.lift(
                    sc -> armed.get() && sc.getClass().getSimpleName().equals("MonoUsingWhen"),
                    (sc, actual) -> new HeldError<>(actual, errorOutOfUsingWhen, errorMayGoOn, errorPassed)));
            Disposable refused;
            armed.set(true);
            try {
                refused = jobs.monoFail(name, () -> { }).subscribe(v -> { }, told::set);
            } finally {
                armed.set(false);
            }
            assertThat(errorOutOfUsingWhen.await(30, TimeUnit.SECONDS)).as("the refusal left usingWhen").isTrue();
            refused.dispose();
            errorMayGoOn.countDown();
            assertThat(errorPassed.await(30, TimeUnit.SECONDS)).as("the refusal passed on").isTrue();
            assertThat(told.get()).as("the refusal told to the subscriber that left").isNull();
            assertThat(dropped).as("errors Reactor dropped (logged at ERROR)").isEmpty();
        } finally {
            errorMayGoOn.countDown();
            holderMayEnd.countDown();
            holder.dispose();
            reactor.core.publisher.Hooks.resetOnEachOperator(PIECES);
            reactor.core.publisher.Hooks.resetOnErrorDropped();
        }
    }

    @Test
    void aRefusalSignalledBeforeItsSubscriberLeftIsKnownAsCrossingTheCancel() throws Exception {
        // The order InvocationOwnershipPropertyTest judges Reactor's dropped errors by: a refusal gcslock signalled
        // before it heard the subscriber leave crossed the cancel (Reactor's own race); one it heard first is never
        // signalled (above).
        String name = "refusal-before-cancel";
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch holderMayEnd = new CountDownLatch(1);
        Disposable holder = jobs.monoFail(name, () -> {
            holding.countDown();
            awaitLatch(holderMayEnd);
        }).subscribe();
        try {
            assertThat(holding.await(30, TimeUnit.SECONDS)).as("another call holds the name").isTrue();
            CompletableFuture<Throwable> told = new CompletableFuture<>();
            java.util.concurrent.atomic.AtomicBoolean crossedBefore = new java.util.concurrent.atomic.AtomicBoolean(true);
            jobs.monoFail(name, () -> { }).subscribe(new reactor.core.CoreSubscriber<String>() {
                private org.reactivestreams.Subscription s;

                @Override
                public void onSubscribe(org.reactivestreams.Subscription s) {
                    this.s = s;
                    s.request(1);
                }

                @Override
                public void onNext(String v) {
                }

                @Override
                public void onError(Throwable t) {
                    crossedBefore.set(ReactiveLocking.signalledBeforeTheSubscriberLeft(t));
                    s.cancel(); // the subscriber leaves as the refusal reaches it (a timeout that fired meanwhile)
                    told.complete(t);
                }

                @Override
                public void onComplete() {
                    told.complete(null);
                }
            });
            Throwable refusal = told.get(30, TimeUnit.SECONDS);
            assertThat(refusal).isInstanceOf(io.github.gcslock.LockNotAcquiredException.class);
            assertThat(crossedBefore).as("known as crossing a cancel before the subscriber left").isFalse();
            assertThat(ReactiveLocking.signalledBeforeTheSubscriberLeft(refusal)).as("known as crossing the cancel").isTrue();
        } finally {
            holderMayEnd.countDown();
            holder.dispose();
        }
    }

    /** Passes everything on, except that an error waits, after saying it came, until the test lets it go on. */
    static final class HeldError<T> implements reactor.core.CoreSubscriber<T>, org.reactivestreams.Subscription {
        private final reactor.core.CoreSubscriber<? super T> actual;
        private final CountDownLatch came;
        private final CountDownLatch goOn;
        private final CountDownLatch passed;
        private org.reactivestreams.Subscription upstream;

        HeldError(reactor.core.CoreSubscriber<? super T> actual, CountDownLatch came, CountDownLatch goOn, CountDownLatch passed) {
            this.actual = actual;
            this.came = came;
            this.goOn = goOn;
            this.passed = passed;
        }

        @Override
        public reactor.util.context.Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(org.reactivestreams.Subscription s) {
            upstream = s;
            actual.onSubscribe(this);
        }

        @Override
        public void onNext(T t) {
            actual.onNext(t);
        }

        @Override
        public void onError(Throwable t) {
            came.countDown();
            awaitLatch(goOn);
            try {
                actual.onError(t);
            } finally {
                passed.countDown();
            }
        }

        @Override
        public void onComplete() {
            actual.onComplete();
        }

        @Override
        public void request(long n) {
            upstream.request(n);
        }

        @Override
        public void cancel() {
            upstream.cancel();
        }
    }

    @Test
    void aNestedPublisherInAChainCancelledBeforeItsAcquisitionBeganTakesNothingAndEndsOnlyForTheLeavingChain() throws Exception {
        // The long run's 'nested MONO_CHAIN FAIL in its chain skipped, expected ran' (InvocationOwnershipPropertyTest:
        // 'A FLUX SKIP x via CANCEL_AFTER_ACQUISITION(20 ms) with nested MONO_CHAIN FAIL', seeds 3581573053774433938 and
        // 8680114733128239391), made deterministic. The caller's chain subscribes a FAIL publisher of the same name
        // (reentrant: the holder's Context reaches it), whose acquisition is scheduled but has not begun when the caller
        // disposes. The cancel travels up the chain: flatMap and defaultIfEmpty pass it upstream before they mark
        // themselves cancelled; gcslock's outer operator of the nested subscription hears it (its acquisition will not
        // begin) and the canceller stops there (held just before the nested usingWhen). The acquisition task runs now:
        // it takes nothing, and the nested publisher completes empty (Reactor's subscribeOn passes a completion to a
        // subscriber that is leaving: Reactive Streams allows signals after a cancel). defaultIfEmpty, not yet marked,
        // turns that into 'skipped', which the chain's flatMap sees. Then the cancel goes on, and the enclosing
        // subscription's lock is given back. Correct: the nested call's subscriber had left before it began, so it does
        // not run, takes nothing, and its end is seen only by the chain being cancelled.
        String name = "nested-chain-cancelled";
        AtomicBoolean nestedScheduleArmed = new AtomicBoolean();
        CountDownLatch nestedScheduled = new CountDownLatch(1);
        CountDownLatch cancelHeardOutside = new CountDownLatch(1);
        CountDownLatch acquisitionEnded = new CountDownLatch(1);
        AtomicBoolean chainCancelling = new AtomicBoolean();
        AtomicReference<String> outcome = new AtomicReference<>();
        AtomicBoolean cancellingWhenSeen = new AtomicBoolean();
        AtomicInteger nestedRan = new AtomicInteger();
        List<Object> callerSaw = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Throwable> dropped = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.publisher.Hooks.onErrorDropped(dropped::add);
        // The nested acquisition (scheduled by the thread that subscribes the chain) begins once the cancel passed
        // gcslock's outer operator of the nested subscription.
        reactor.core.scheduler.Schedulers.onScheduleHook(PIECES, task -> !nestedScheduleArmed.compareAndSet(true, false) ? task : () -> {
            nestedScheduled.countDown();
            awaitLatch(cancelHeardOutside);
            try {
                task.run();
            } finally {
                acquisitionEnded.countDown();
            }
        });
        // The canceller stops just before the nested usingWhen (the one whose subscriber sees the enclosing lease)
        // until the nested acquisition ended.
        reactor.core.publisher.Hooks.onEachOperator(PIECES, reactor.core.publisher.Operators.lift(
                sc -> sc.getClass().getSimpleName().equals("MonoUsingWhen"),
                (sc, actual) -> !actual.currentContext().hasKey(io.github.gcslock.Lease.class) ? actual
                        : new HeldCancel<>(actual, cancelHeardOutside, acquisitionEnded)));
        try {
            Disposable first = jobs.monoSkip(name, () -> {
                nestedScheduleArmed.set(true);
                return jobs.monoFail(name, nestedRan::incrementAndGet)
                        .map(v -> "ran")
                        .defaultIfEmpty("skipped")
                        .flatMap(o -> {
                            outcome.set(o);
                            cancellingWhenSeen.set(chainCancelling.get());
                            return Mono.just("body");
                        })
                        .doOnCancel(() -> chainCancelling.set(true));
            }).subscribe(callerSaw::add, callerSaw::add);
            assertThat(nestedScheduled.await(30, TimeUnit.SECONDS)).as("the nested acquisition was scheduled").isTrue();
            CompletableFuture.runAsync(first::dispose, APP).get(30, TimeUnit.SECONDS);
            assertThat(acquisitionEnded.await(30, TimeUnit.SECONDS)).as("the nested acquisition ended").isTrue();
            assertThat(nestedRan).as("runs of the nested method (its subscriber left before it began)").hasValue(0);
            assertThat(outcome.get()).as("what the chain saw of the nested publisher").isEqualTo("skipped");
            assertThat(cancellingWhenSeen).as("the chain's cancel had begun when it saw the nested publisher's end").isTrue();
            assertThat(callerSaw).as("what the caller who disposed saw").isEmpty();
            assertThat(dropped).as("errors Reactor dropped (logged at ERROR)").isEmpty();
            await("every lease to be released").atMost(Duration.ofSeconds(10)).until(() -> registry.heldLeases().isEmpty());
            assertThat(jobs.monoFail(name, () -> { }).block(Duration.ofSeconds(30))).as("the caller's next call").isEqualTo("ran");
        } finally {
            cancelHeardOutside.countDown();
            acquisitionEnded.countDown();
            reactor.core.scheduler.Schedulers.resetOnScheduleHook(PIECES);
            reactor.core.publisher.Hooks.resetOnEachOperator(PIECES);
            reactor.core.publisher.Hooks.resetOnErrorDropped();
        }
    }

    private static final String PIECES = "OwnCallRaceAndShutdownReentryTest.pieces";

    /** Passes everything on, except that the first cancel waits, after saying it came, until the test lets it go on. */
    static final class HeldCancel<T> implements reactor.core.CoreSubscriber<T>, org.reactivestreams.Subscription {
        private final reactor.core.CoreSubscriber<? super T> actual;
        private final CountDownLatch came;
        private final CountDownLatch goOn;
        private org.reactivestreams.Subscription upstream;

        HeldCancel(reactor.core.CoreSubscriber<? super T> actual, CountDownLatch came, CountDownLatch goOn) {
            this.actual = actual;
            this.came = came;
            this.goOn = goOn;
        }

        @Override
        public reactor.util.context.Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(org.reactivestreams.Subscription s) {
            upstream = s;
            actual.onSubscribe(this);
        }

        @Override
        public void onNext(T t) {
            actual.onNext(t);
        }

        @Override
        public void onError(Throwable t) {
            actual.onError(t);
        }

        @Override
        public void onComplete() {
            actual.onComplete();
        }

        @Override
        public void request(long n) {
            upstream.request(n);
        }

        @Override
        public void cancel() {
            came.countDown();
            awaitLatch(goOn);
            upstream.cancel();
        }
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aCallerWhoTimesOutWhileItsCompletedCallsLockIsGivenBackIsNotRefusedByItWhenItCallsAgain() {
        // The method's publisher completes; its lock is given back (a DELETE whose reply takes 1.5 s) before the
        // caller is told. The caller's timeout between items (300 ms) fires meanwhile: it cancels (too late for
        // usingWhen, whose release is under way) and the caller sees its call end, with the release still in flight.
        List<String> results = jobs.fluxFail("completed", () -> faults.slowReplies(1, Duration.ofMillis(1500)))
                .timeout(Mono.never(), item -> Mono.delay(Duration.ofMillis(300)))
                .onErrorResume(TimeoutException.class, e -> jobs.fluxFail("completed", () -> { }))
                .collectList()
                .block(Duration.ofSeconds(30));
        assertThat(results).as("the first call's item, then the next call's, made as the first timed out")
                .containsExactly("ran", "ran");
        assertThat(faults.slowedReplies()).as("the first call's release was slowed").isEqualTo(1);
    }

    @Test
    void aCallerWhoCancelledItsFutureIsNotSkippedByItsReleaseWhenItCallsAgainOnceTheWorkEnded() throws Exception {
        // The caller cancels the returned future while the work (supplyAsync on the application's executor) still
        // runs: the lock stays held until the work ends. The work ends; its lock is given back (a DELETE whose reply
        // takes 1.5 s) on the work's thread, and the caller, seeing the work end, calls again at once.
        CountDownLatch workEnds = new CountDownLatch(1);
        CompletableFuture<String> first = jobs.futureAsyncSkip("cancelled-first", workEnds);
        assertThat(first.cancel(true)).as("the caller's cancel of the running call").isTrue();
        faults.slowReplies(1, Duration.ofMillis(1500));
        workEnds.countDown();
        await("the cancelled call's release to be in flight").atMost(Duration.ofSeconds(30))
                .until(() -> faults.slowedReplies() == 1);
        assertThat(jobs.futureAsyncSkip("cancelled-first", new CountDownLatch(0)).get(30, TimeUnit.SECONDS))
                .as("the caller's next call, made as its cancelled call's lock was being given back").isEqualTo("ran");
    }

    @Test
    void aCallerWhoCancelsItsFutureWhileItsLockIsGivenBackIsNotSkippedByItWhenItCallsAgain() throws Exception {
        // The work ends and its lock is being given back (a DELETE whose reply takes 1.5 s): the returned future is
        // not complete yet. The caller cancels it then (a timeout of its own) and calls again at once.
        CountDownLatch workEnds = new CountDownLatch(1);
        CompletableFuture<String> first = jobs.futureAsyncSkip("cancelled-releasing", workEnds);
        faults.slowReplies(1, Duration.ofMillis(1500));
        workEnds.countDown();
        await("the call's release to be in flight").atMost(Duration.ofSeconds(30)).until(() -> faults.slowedReplies() == 1);
        assertThat(first.cancel(true)).as("the caller's cancel while the lock is given back").isTrue();
        assertThat(jobs.futureAsyncSkip("cancelled-releasing", new CountDownLatch(0)).get(30, TimeUnit.SECONDS))
                .as("the caller's next call, made as it cancelled").isEqualTo("ran");
    }

    @Test
    void aNestedPlainWaitCallRunsOnceTheContextIsClosing() {
        waits.onApplicationEvent(new ContextClosedEvent(new GenericApplicationContext()));
        // A job that started (FAIL does not wait) calls a WAIT method of its own lock: a reentrant hold, no wait.
        assertThat(jobs.syncFail("sync-nested", () -> jobs.syncWait("sync-nested")))
                .as("what the nested WAIT call returned").isEqualTo("ran");
    }

    @Test
    void aNestedPublisherWaitCallInTheHoldersChainRunsOnceTheContextIsClosing() {
        waits.onApplicationEvent(new ContextClosedEvent(new GenericApplicationContext()));
        // A publisher's chain subscribes a WAIT publisher of its own lock: reentrant (README: runs), no wait.
        assertThat(jobs.monoSkip("chain-nested", () -> jobs.monoWait("chain-nested")).block(Duration.ofSeconds(30)))
                .as("what the nested WAIT publisher emitted").isEqualTo("ran");
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The locked methods; the lock name is the first argument. */
    public static class Jobs {

        @GcsLocked(value = "#p0", ifLocked = IfLocked.FAIL)
        public Mono<String> monoFail(String name, Runnable ownCode) {
            ownCode.run();
            return Mono.just("ran");
        }

        @GcsLocked(value = "#p0", ifLocked = IfLocked.FAIL)
        public Flux<String> fluxFail(String name, Runnable ownCode) {
            ownCode.run();
            return Flux.just("ran");
        }

        @GcsLocked(value = "#p0", ifLocked = IfLocked.FAIL)
        public Object syncFail(String name, Supplier<Object> body) {
            return body.get();
        }

        @GcsLocked(value = "#p0", ifLocked = IfLocked.WAIT)
        public Object syncWait(String name) {
            return "ran";
        }

        @GcsLocked(value = "#p0")
        public Mono<String> monoSkip(String name, Supplier<Mono<String>> chain) {
            return chain.get();
        }

        @GcsLocked(value = "#p0", ifLocked = IfLocked.WAIT)
        public Mono<String> monoWait(String name) {
            return Mono.just("ran");
        }

        /** Work on the application's own executor, ending when {@code workEnds} opens. */
        @GcsLocked(value = "#p0")
        public CompletableFuture<String> futureAsyncSkip(String name, CountDownLatch workEnds) {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    workEnds.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return "ran";
            }, APP);
        }
    }
}
