package io.github.gcslock.autoconfigure;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockRegistry;
import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.GcsLockedInterceptor;
import io.github.gcslock.spring.GcsLocks;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @GcsLocked} is applied by gcslock's own advising post-processor, whatever auto-proxy creator
 * the application has or lacks: never a silent no-op, never applied twice, always outside
 * {@code @Transactional}.
 */
class GcsLockedProxyingTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();
    private static GcsLockRegistry otherInstance;

    @BeforeAll
    static void start() {
        // Long TTLs: nothing here waits for an expiry, and a loaded machine must not time GCS calls out.
        otherInstance = GcsLockRegistry.builder(gcs.storage(), "locks").ttl(Duration.ofSeconds(60)).build();
    }

    @AfterAll
    static void stop() {
        otherInstance.close();
    }

    private ApplicationContextRunner runner() {
        return gcs.runner().withPropertyValues("gcslock.ttl=60s");
    }

    private static List<Advisor> gcsLockedAdvisors(Object bean) {
        return Arrays.stream(((Advised) bean).getAdvisors())
                .filter(a -> a.getAdvice() instanceof GcsLockedInterceptor).toList();
    }

    private static void assertOneProxyWithOneGcsLockedAdvisor(Object bean) {
        assertThat(AopUtils.isAopProxy(bean)).as("proxied").isTrue();
        assertThat(AopUtils.isAopProxy(AopProxyUtils.getSingletonTarget(bean))).as("not a proxy of a proxy").isFalse();
        assertThat(gcsLockedAdvisors(bean)).as("@GcsLocked applied once").hasSize(1);
    }

    @Test
    void enforcedWithoutAnyAutoProxyCreator() {
        // spring.aop.auto=false and no @EnableTransactionManagement/@EnableCaching: no auto-proxy creator at all.
        runner().withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
                .withPropertyValues("spring.aop.auto=false")
                .withUserConfiguration(PlainJob.class).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Job job = ctx.getBean(Job.class);
                    Lease held = otherInstance.tryAcquire("no-apc").orElseThrow();
                    try {
                        assertThat(job.run()).as("skipped: another instance holds the lock").isNull();
                        assertThat(job.runs()).isZero();
                    } finally {
                        held.release();
                    }
                    assertThat(job.run()).isEqualTo("no-apc");
                    assertThat(job.runs()).isEqualTo(1);
                    assertOneProxyWithOneGcsLockedAdvisor(job);
                });
    }

    @Test
    void asyncWithoutAutoProxyCreatorHoldsTheLockOnTheAsyncThread() {
        runner().withUserConfiguration(AsyncJobConfig.class).run(ctx -> {
            AsyncJob job = ctx.getBean(AsyncJob.class);
            assertOneProxyWithOneGcsLockedAdvisor(job);
            String lockThread = job.work().get(5, TimeUnit.SECONDS);
            assertThat(lockThread).as("lock held on the async thread").isNotEqualTo(Thread.currentThread().getName());
        });
    }

    @Test
    void besideAnAspectJAutoProxyCreatorAndTransactionsOneProxyAndTheLockOutsideTheTransaction() {
        runner().withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
                .withUserConfiguration(TransactionalJobConfig.class).run(this::lockedOutsideTheTransaction);
    }

    @Test
    void besideTheInfrastructureAutoProxyCreatorOfTransactionsOneProxyAndTheLockOutsideTheTransaction() {
        runner().withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
                .withPropertyValues("spring.aop.auto=false")
                .withUserConfiguration(TransactionalJobConfig.class).run(this::lockedOutsideTheTransaction);
    }

    private void lockedOutsideTheTransaction(org.springframework.context.ApplicationContext ctx) {
        TxJob job = ctx.getBean(TxJob.class);
        assertOneProxyWithOneGcsLockedAdvisor(job);
        RecordingTransactionManager tx = ctx.getBean(RecordingTransactionManager.class);
        assertThat(job.work()).as("ran in a transaction").isTrue();
        assertThat(tx.heldAtCommit).as("the lock was still held when the transaction committed")
                .containsExactly(List.of("tx-job"));
        assertThat(ctx.getBean(LockRegistry.class).heldLeases()).isEmpty();
        Lease held = otherInstance.tryAcquire("tx-job").orElseThrow();
        try {
            assertThat(job.work()).as("skipped").isNull();
            assertThat(tx.heldAtCommit).as("no transaction began for a skipped call").hasSize(1);
        } finally {
            held.release();
        }
    }

    public static class Job {
        private final AtomicInteger runs = new AtomicInteger();

        @GcsLocked("no-apc")
        public String run() {
            runs.incrementAndGet();
            return GcsLocks.currentLease().orElseThrow().name();
        }

        public int runs() {
            return runs.get();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class PlainJob {
        @Bean
        Job job() {
            return new Job();
        }
    }

    public static class AsyncJob {
        @Async
        @GcsLocked("async-no-apc")
        public CompletableFuture<String> work() {
            GcsLocks.checkHealthy();
            return CompletableFuture.completedFuture(Thread.currentThread().getName());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncJobConfig {
        @Bean
        AsyncJob asyncJob() {
            return new AsyncJob();
        }
    }

    public static class TxJob {
        @Transactional
        @GcsLocked("tx-job")
        public Boolean work() {
            return TransactionSynchronizationManager.isActualTransactionActive();
        }
    }

    /** Records which locks this process held when each transaction committed. */
    static class RecordingTransactionManager extends AbstractPlatformTransactionManager {
        final List<List<String>> heldAtCommit = new CopyOnWriteArrayList<>();
        @Autowired
        LockRegistry locks;

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, org.springframework.transaction.TransactionDefinition definition) {
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
            List<String> names = new ArrayList<>();
            locks.heldLeases().forEach(l -> names.add(l.name()));
            heldAtCommit.add(names);
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class TransactionalJobConfig {
        @Bean
        TxJob txJob() {
            return new TxJob();
        }

        @Bean
        RecordingTransactionManager transactionManager() {
            return new RecordingTransactionManager();
        }
    }
}
