package io.github.gcslock.spring;

import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Two application contexts on one bucket behave as two instances of one service. */
class MultiInstanceTest {

    /** Shared by both "instances" (static: they run in one JVM here). */
    static final List<String> SCHEDULED_RUNS = new CopyOnWriteArrayList<>();
    static final AtomicInteger INSIDE = new AtomicInteger();
    static final AtomicInteger MAX_INSIDE = new AtomicInteger();

    private static ConfigurableApplicationContext start(String bucket, String instance, boolean scheduling) {
        return new SpringApplicationBuilder(scheduling ? ScheduledApp.class : App.class)
                .web(WebApplicationType.NONE)
                .properties("gcslock.emulator.endpoint=" + SharedEmulator.GCS.endpoint(), "gcslock.bucket=" + bucket,
                        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=300ms", "spring.application.name=" + instance,
                        "spring.main.banner-mode=off")
                .run();
    }

    @Test
    void onlyOneInstanceRunsTheJobAndShutdownHandsItOverAtOnce() throws Exception {
        String bucket = SharedEmulator.newBucket();
        ConfigurableApplicationContext a = start(bucket, "instance-a", false);
        ConfigurableApplicationContext b = start(bucket, "instance-b", false);
        try {
            Job jobA = a.getBean(Job.class);
            Job jobB = b.getBean(Job.class);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            CountDownLatch release = new CountDownLatch(1);
            Future<String> fa = pool.submit(() -> jobA.run(release));
            Future<String> fb = pool.submit(() -> jobB.run(release));
            await("exactly one of the two instances to run the job, and the other's call to return")
                    .atMost(Duration.ofSeconds(30)).until(() -> jobA.runs() + jobB.runs() == 1 && (fa.isDone() || fb.isDone()));
            release.countDown();
            List<String> results = new ArrayList<>(List.of(String.valueOf(fa.get(5, TimeUnit.SECONDS)), String.valueOf(fb.get(5, TimeUnit.SECONDS))));
            pool.shutdown();
            assertThat(jobA.runs() + jobB.runs()).isEqualTo(1);
            assertThat(results).containsExactlyInAnyOrder("ran", "null");

            // Graceful shutdown of a holder releases its lock at once: the other instance need not wait the TTL.
            LockRegistry locksA = a.getBean(LockRegistry.class);
            locksA.tryAcquire("handover").orElseThrow();
            a.close();
            assertThat(b.getBean(LockRegistry.class).tryAcquire("handover")).isPresent();
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void scheduledJobsOfTwoInstancesNeverOverlap() {
        String bucket = SharedEmulator.newBucket();
        SCHEDULED_RUNS.clear();
        MAX_INSIDE.set(0);
        ConfigurableApplicationContext a = start(bucket, "sched-a", true);
        ConfigurableApplicationContext b = start(bucket, "sched-b", true);
        try {
            await("6 scheduled runs across the two instances")
                    .atMost(Duration.ofSeconds(60)).until(() -> SCHEDULED_RUNS.size() >= 6);
        } finally {
            a.close();
            b.close();
        }
        assertThat(MAX_INSIDE.get()).isEqualTo(1);
    }

    @Test
    void theLockIsTakenOutsideTheTransaction() {
        String bucket = SharedEmulator.newBucket();
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(TxApp.class).web(WebApplicationType.NONE)
                .properties("gcslock.emulator.endpoint=" + SharedEmulator.GCS.endpoint(), "gcslock.bucket=" + bucket,
                        "gcslock.ttl=2s", "gcslock.write-rate-window=20ms", "gcslock.refresh-interval=300ms", "spring.main.banner-mode=off")
                .run();
        try {
            TxJob job = ctx.getBean(TxJob.class);
            job.work();
            assertThat(TxApp.ORDER).containsExactly("lock-acquired", "tx-begin", "work", "tx-commit", "lock-released");
        } finally {
            ctx.close();
        }
    }

    public static class Job {
        private final AtomicInteger runs = new AtomicInteger();

        @GcsLocked("exclusive-job")
        public String run(CountDownLatch release) throws InterruptedException {
            runs.incrementAndGet();
            release.await(5, TimeUnit.SECONDS);
            return "ran";
        }

        public int runs() {
            return runs.get();
        }
    }

    public static class ScheduledJob {
        @Scheduled(fixedRate = 50)
        @GcsLocked("tick")
        public void tick() throws InterruptedException {
            MAX_INSIDE.accumulateAndGet(INSIDE.incrementAndGet(), Math::max);
            Thread.sleep(30);
            SCHEDULED_RUNS.add(Thread.currentThread().getName());
            INSIDE.decrementAndGet();
        }
    }

    public static class TxJob {
        @GcsLocked("tx-job")
        @Transactional
        public void work() {
            TxApp.ORDER.add("work");
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Job job() {
            return new Job();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class ScheduledApp {
        @Bean
        ScheduledJob scheduledJob() {
            return new ScheduledJob();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableTransactionManagement
    static class TxApp {
        static final List<String> ORDER = new CopyOnWriteArrayList<>();

        @Bean
        TxJob txJob() {
            return new TxJob();
        }

        @Bean
        LockEventListener orderRecorder() {
            return new LockEventListener() {
                @Override
                public void acquired(io.github.gcslock.Lease lease) {
                    ORDER.add("lock-acquired");
                }

                @Override
                public void released(io.github.gcslock.Lease lease) {
                    ORDER.add("lock-released");
                }
            };
        }

        @Bean
        AbstractPlatformTransactionManager transactionManager() {
            return new AbstractPlatformTransactionManager() {
                @Override
                protected Object doGetTransaction() {
                    return new Object();
                }

                @Override
                protected void doBegin(Object transaction, TransactionDefinition definition) {
                    ORDER.add("tx-begin");
                }

                @Override
                protected void doCommit(DefaultTransactionStatus status) {
                    ORDER.add("tx-commit");
                }

                @Override
                protected void doRollback(DefaultTransactionStatus status) {
                    ORDER.add("tx-rollback");
                }
            };
        }
    }
}
