package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.autoconfigure.GcsLockMetricsAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.mock.env.MockEnvironment;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.assertj.core.api.ThrowingConsumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Smaller contract points of {@code @GcsLocked}: interrupts, meter outcomes per mode, skipped-event listeners, names. */
class GcsLockedContractTest {

    private static final String BUCKET = SharedEmulator.newBucket();

    private final GcsLockRegistry other = SharedEmulator.holdingInstance(BUCKET);

    @AfterEach
    void closeOther() {
        other.close();
    }

    private ApplicationContextRunner runner() {
        return SharedEmulator.runner(BUCKET, GcsLockMetricsAutoConfiguration.class)
                .withPropertyValues("gcslock.ttl=60s", "gcslock.backoff.initial=10ms", "gcslock.backoff.max=50ms")
                .withBean(Modes.class);
    }

    public static class Modes {
        @GcsLocked("busy")
        public String skip() {
            return "ran";
        }

        @GcsLocked(value = "busy", maxWait = "200ms")
        public String skipWithWait() {
            return "ran";
        }

        @GcsLocked(value = "busy", ifLocked = IfLocked.FAIL)
        public String fail() {
            return "ran";
        }

        @GcsLocked(value = "busy", ifLocked = IfLocked.FAIL, maxWait = "200ms")
        public String failWithWait() {
            return "ran";
        }

        @GcsLocked(value = "busy", ifLocked = IfLocked.WAIT, maxWait = "200ms")
        public String waitUpTo200ms() {
            return "ran";
        }

        @GcsLocked(value = "busy", ifLocked = IfLocked.WAIT)
        public String waitWithoutLimit() {
            return "ran";
        }

        @GcsLocked("free")
        public String free() {
            return outerOf(this);
        }

        @GcsLocked("free")
        public String nested() {
            return "nested";
        }

        private static String outerOf(Modes self) {
            return "ran";
        }
    }

    /** Runs {@code body} while another instance holds {@code busy}. */
    private void whileBusyElsewhere(ThrowingCallable body) throws Throwable {
        Lease held = other.tryAcquire("busy").orElseThrow();
        try {
            body.call();
        } finally {
            held.release();
        }
    }

    /** What a caller of {@code waitWithoutLimit()} threw when interrupted, and whether its interrupt flag was set after. */
    private record Interrupted(Throwable thrown, boolean flagAfter) {
    }

    /**
     * Calls {@code waitWithoutLimit()} on a thread of its own while {@code busy} is held elsewhere (after
     * {@code beforeStart}), interrupts that thread once {@code untilWaiting} returns, and waits for the call to end.
     */
    private Interrupted interruptWaitingCaller(Modes modes, ThrowingCallable beforeStart, ThrowingConsumer<Thread> untilWaiting)
            throws Throwable {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                modes.waitWithoutLimit();
            } catch (Throwable t) {
                thrown.set(t);
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        }, "waiting-caller");
        whileBusyElsewhere(() -> {
            beforeStart.call();
            caller.start();
            untilWaiting.accept(caller);
            caller.interrupt();
            caller.join(10_000);
            assertThat(caller.isAlive()).as("the wait ended").isFalse();
        });
        return new Interrupted(thrown.get(), flagAfter.get());
    }

    private static Map<String, Long> acquireOutcomes(MeterRegistry meters) {
        Map<String, Long> counts = new TreeMap<>();
        for (Timer t : meters.find("gcslock.acquire").timers()) {
            counts.merge(t.getId().getTag("outcome"), t.count(), Long::sum);
        }
        return counts;
    }

    @Test
    void acquireMeterOutcomeFollowsTheMode() {
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(ctx -> {
            Modes modes = ctx.getBean(Modes.class);
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            assertThat(modes.free()).isEqualTo("ran");
            whileBusyElsewhere(() -> {
                assertThat(modes.skip()).isNull();
                assertThat(modes.skipWithWait()).isNull();
                assertThatThrownBy(modes::fail).isInstanceOf(LockNotAcquiredException.class);
                assertThatThrownBy(modes::failWithWait).isInstanceOf(LockNotAcquiredException.class);
                assertThatThrownBy(modes::waitUpTo200ms).isInstanceOf(LockNotAcquiredException.class);
                assertThat(ctx.getBean(LockRegistry.class).tryAcquire("busy")).isEmpty();
            });
            assertThat(acquireOutcomes(meters)).containsExactlyInAnyOrderEntriesOf(Map.of(
                    "acquired", 1L,   // free()
                    "skipped", 2L,    // SKIP, with and without maxWait
                    "refused", 2L,    // FAIL, with and without maxWait
                    "timeout", 1L,    // WAIT whose maxWait ran out
                    "busy", 1L));     // a direct tryAcquire that found it held
        });
    }

    @Test
    void anInterruptedWaitRestoresTheFlagAndThrowsADocumentedException() {
        runner().run(ctx -> {
            Modes modes = ctx.getBean(Modes.class);
            Interrupted call = interruptWaitingCaller(modes, () -> { }, caller ->
                    await("the caller to wait for the lock")
                            .atMost(Duration.ofSeconds(30)).until(() -> caller.getState() == Thread.State.TIMED_WAITING
                            || caller.getState() == Thread.State.WAITING));
            assertThat(call.thrown()).isInstanceOf(GcsLockException.class)
                    .hasMessageContaining("'busy'").hasMessageContaining("interrupted").hasMessageContaining("Modes.waitWithoutLimit(..)")
                    .hasCauseInstanceOf(InterruptedException.class);
            assertThat(call.thrown().getClass().getName()).isEqualTo("io.github.gcslock.spring.GcsLockInterruptedException");
            assertThat(call.flagAfter()).as("interrupt flag restored").isTrue();
        });
    }

    @Test
    void anInterruptDuringAGcsRequestOfTheWaitEndsItTheSameWay() {
        runner().run(ctx -> {
            Modes modes = ctx.getBean(Modes.class);
            java.util.concurrent.CountDownLatch inRequest = new java.util.concurrent.CountDownLatch(1);
            // The interrupt arrives while the waiter's poll is inside a (slow) GCS request, not in its sleep.
            Interrupted call = interruptWaitingCaller(modes,
                    () -> SharedEmulator.GCS.faults().beforeNext(io.github.gcslock.test.Operation.GET, () -> {
                        inRequest.countDown();
                        GcsLockedAspectTest.sleep(500);
                    }),
                    caller -> assertThat(inRequest.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue());
            assertThat(call.thrown()).isInstanceOf(GcsLockInterruptedException.class);
            assertThat(call.flagAfter()).as("interrupt flag restored").isTrue();
        });
    }

    static class FailingSkippedListener implements ApplicationListener<GcsLockSkippedEvent> {
        final AtomicBoolean called = new AtomicBoolean();

        @Override
        public void onApplicationEvent(GcsLockSkippedEvent event) {
            called.set(true);
            throw new IllegalStateException("alerting failed");
        }
    }

    @Test
    void anExceptionFromASkippedEventListenerDoesNotReachTheCaller() {
        runner().withBean(FailingSkippedListener.class).run(ctx -> whileBusyElsewhere(() -> {
            assertThat(ctx.getBean(Modes.class).skip()).isNull();
            assertThat(ctx.getBean(FailingSkippedListener.class).called).isTrue();
        }));
    }

    public static class EmptyName {
        @GcsLocked("${app.job-name}")
        public void run() {
        }
    }

    @Test
    void anEmptyNameFromAPlaceholderIsReportedAgainstTheMethod() {
        // The interceptor on its own (no start-up name check, e.g. a proxy built by hand): the error still names the method.
        MockEnvironment env = new MockEnvironment().withProperty("app.job-name", "");
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        beans.registerSingleton("locks", other);
        GcsLockedInterceptor interceptor = new GcsLockedInterceptor(beans.getBeanProvider(LockRegistry.class),
                env, null, event -> { }, Duration.ZERO);
        ProxyFactory pf = new ProxyFactory(new EmptyName());
        pf.setProxyTargetClass(true);
        pf.addAdvisor(new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, GcsLocked.class, true), interceptor));
        EmptyName proxy = (EmptyName) pf.getProxy();
        assertThatThrownBy(proxy::run).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("EmptyName.run(..)").hasMessageContaining("${app.job-name}").hasMessageContaining("empty");
    }
}
