package io.github.gcslock.benchmarks;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.GcsLockedInterceptor;
import io.github.gcslock.test.GcsEmulator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.core.env.StandardEnvironment;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Cost of {@code @GcsLocked} around a no-op when this thread already holds the lock (the reentrant
 * path: no GCS request), with a literal name and with a SpEL name, against calling the method bare.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class AspectBenchmark {

    /** The advised bean. */
    public static class Target {
        @GcsLocked("bench")
        public int literal() {
            return 1;
        }

        @GcsLocked("'tenant-' + #tenant")
        public int spel(String tenant) {
            return 1;
        }

        public int bare() {
            return 1;
        }
    }

    private GcsEmulator gcs;
    private GcsLockRegistry registry;
    private Target proxy;
    private Target plain;
    private Lease outer1;
    private Lease outer2;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        gcs = Bench.emulator();
        registry = GcsLockRegistry.builder(gcs.storage(), Bench.BUCKET).verifyBucket(false).build();
        plain = new Target();
        ProxyFactory pf = new ProxyFactory(plain);
        pf.setProxyTargetClass(true);
        StaticListableBeanFactory beans = new StaticListableBeanFactory(Map.of("locks", registry));
        pf.addAdvisor(new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, GcsLocked.class, true),
                new GcsLockedInterceptor(beans.getBeanProvider(LockRegistry.class), new StandardEnvironment(), null,
                        event -> { }, Duration.ZERO)));
        proxy = (Target) pf.getProxy();
        // Held by this (the benchmark) thread: every advised call below is a reentrant hold.
        outer1 = registry.acquire("bench", Duration.ZERO);
        outer2 = registry.acquire("tenant-acme", Duration.ZERO);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        outer1.release();
        outer2.release();
        registry.close();
        gcs.close();
    }

    @Benchmark
    public int bareCall() {
        return plain.bare();
    }

    @Benchmark
    public int reentrantLiteralName() {
        return proxy.literal();
    }

    @Benchmark
    public int reentrantSpelName() {
        return proxy.spel("acme");
    }
}
