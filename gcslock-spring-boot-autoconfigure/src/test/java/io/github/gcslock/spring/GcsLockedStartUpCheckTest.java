package io.github.gcslock.spring;

import io.github.gcslock.autoconfigure.GcsLockFailureAnalyzer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.annotation.AliasFor;
import reactor.core.publisher.Mono;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nothing silently unlocked: a {@code @GcsLocked} method that the proxy cannot intercept, a composed annotation
 * on a class, or a return type whose work the lock cannot follow stops start-up naming the method and the reason.
 */
class GcsLockedStartUpCheckTest {

    private static final String BUCKET = SharedEmulator.newBucket();

    private ApplicationContextRunner runner() {
        return SharedEmulator.runner(BUCKET);
    }

    private String startUpReport(Class<?> bean) {
        String[] report = new String[1];
        runner().withBean(bean).run(ctx -> {
            assertThat(ctx).as("start-up of a context with " + bean.getSimpleName()).hasFailed();
            FailureAnalysis a = new GcsLockFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(a).as("analyzed by gcslock: " + ctx.getStartupFailure()).isNotNull();
            report[0] = a.getDescription();
        });
        return report[0];
    }

    static class FinalMethod { @GcsLocked("job") public final void run() { } }

    static class StaticMethod { @GcsLocked("job") public static void run() { } }

    static class PrivateMethod {
        @GcsLocked("job") private void run() { }

        public void caller() {
            run();
        }
    }

    static final class FinalClass { @GcsLocked("job") public void run() { } }

    @Target({ElementType.METHOD, ElementType.TYPE})
    @Retention(RetentionPolicy.RUNTIME)
    @GcsLocked
    @interface NightlyJob {
        @AliasFor(annotation = GcsLocked.class, attribute = "name")
        String value();
    }

    @NightlyJob("nightly")
    static class ComposedOnClass { public void run() { } }

    static class ComposedOnMethod {
        final AtomicInteger runs = new AtomicInteger();

        @NightlyJob("nightly")
        public void run() {
            runs.incrementAndGet();
        }

        public int runs() { // through a method: the test sees the proxy, whose own fields are unset
            return runs.get();
        }
    }

    static class PlainFuture { @GcsLocked("job") public Future<String> run() { return null; } }

    @Test
    void aFinalMethodRefusesStartUpNamingIt() {
        assertThat(startUpReport(FinalMethod.class)).contains("FinalMethod.run(..)").contains("final");
    }

    @Test
    void aStaticMethodRefusesStartUpNamingIt() {
        assertThat(startUpReport(StaticMethod.class)).contains("StaticMethod.run(..)").contains("static");
    }

    @Test
    void aPrivateMethodRefusesStartUpNamingIt() {
        assertThat(startUpReport(PrivateMethod.class)).contains("PrivateMethod.run(..)").contains("private");
    }

    @Test
    void aFinalClassRefusesStartUpNamingTheMethod() {
        assertThat(startUpReport(FinalClass.class)).contains("FinalClass.run(..)").contains("final class");
    }

    @Test
    void aComposedAnnotationOnAClassRefusesStartUpNamingTheClass() {
        assertThat(startUpReport(ComposedOnClass.class)).contains("ComposedOnClass").contains("@NightlyJob");
    }

    @Test
    void aComposedAnnotationOnAMethodLocksIt() {
        runner().withBean(ComposedOnMethod.class).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            ComposedOnMethod bean = ctx.getBean(ComposedOnMethod.class);
            try (var other = SharedEmulator.holdingInstance(BUCKET)) {
                var held = other.tryAcquire("nightly").orElseThrow();
                bean.run();
                assertThat(bean.runs()).as("skipped while another instance holds 'nightly'").isZero();
                held.release();
                bean.run();
                assertThat(bean.runs()).isEqualTo(1);
            }
        });
    }

    @Test
    void aPlainFutureReturnTypeRefusesStartUpNamingTheMethod() {
        assertThat(startUpReport(PlainFuture.class)).contains("PlainFuture.run(..)").contains("Future");
    }
}
