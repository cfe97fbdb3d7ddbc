package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.test.GcsEmulator;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;
import org.springframework.integration.handler.ServiceActivatingHandler;
import org.springframework.integration.handler.advice.LockRequestHandlerAdvice;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.messaging.MessageHandlingException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The registry under Spring Integration's own users: {@code LockRegistryLeaderInitiator} (with its default
 * 500 ms heartbeat) and {@code LockRequestHandlerAdvice}. The leader's heartbeat must cost no GCS request
 * beyond its lease's own refreshes.
 */
class GcsIntegrationLeaderAndAdviceTest {

    static final class Candidate extends DefaultCandidate {
        final AtomicBoolean leader = new AtomicBoolean();
        final AtomicInteger grants = new AtomicInteger();

        Candidate(String id) {
            super(id, "cluster-leader");
        }

        @Override
        public void onGranted(Context ctx) {
            grants.incrementAndGet();
            leader.set(true);
        }

        @Override
        public void onRevoked(Context ctx) {
            leader.set(false);
        }
    }

    @Test
    void aLeadersHeartbeatCostsNoGcsRequestBeyondItsRefreshes() throws Exception {
        // An emulator of its own, so that nothing else's requests are counted.
        GcsEmulator gcs = GcsEmulator.start().createBucket("leader");
        // TTL 8 s → the lease refreshes every second (TTL/8); the heartbeat re-tryLocks every 500 ms.
        GcsLockRegistry engine = GcsLockRegistry.builder(gcs.storage(), "leader").ttl(Duration.ofSeconds(8)).build();
        Candidate candidate = new Candidate("only");
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(engine), candidate);
        try {
            initiator.start();
            await("the only candidate to lead").atMost(Duration.ofSeconds(30)).until(candidate.leader::get);
            Map<Operation, Long> before = gcs.faults().requestCounts();
            long start = System.nanoTime();
            Thread.sleep(4000); // eight heartbeats
            Map<Operation, Long> after = gcs.faults().requestCounts();
            double seconds = (System.nanoTime() - start) / 1e9;
            long patches = after.get(Operation.PATCH) - before.get(Operation.PATCH);
            long others = 0;
            for (Operation op : Operation.values()) {
                if (op != Operation.PATCH) {
                    others += after.get(op) - before.get(op);
                }
            }
            System.out.printf("LEADER requests over %.1f s with refreshInterval %s and heartbeat 500 ms: %d refresh PATCHes, %d other"
                            + " requests = %.1f requests/minute (the refreshes alone: %.1f/minute)%n", seconds,
                    engine.refreshInterval(), patches, others, (patches + others) * 60 / seconds, 60.0 / engine.refreshInterval().toSeconds());
            assertThat(others).as("heartbeats re-tryLock the held lock locally: no GET, create or delete").isZero();
            assertThat(patches).as("only the lease's own refreshes, one per refresh interval")
                    .isBetween(1L, (long) Math.ceil(seconds / engine.refreshInterval().toSeconds()) + 1);
            assertThat(candidate.leader).isTrue();
            assertThat(candidate.grants).hasValue(1);
        } finally {
            initiator.destroy();
            engine.close();
            gcs.close();
        }
    }

    @Test
    void aFollowerNeverDisturbsTheLeaderAndItsCostIsReported() throws Exception {
        GcsEmulator gcs = GcsEmulator.start().createBucket("leader");
        GcsLockRegistry e1 = GcsLockRegistry.builder(gcs.storage(), "leader").ttl(Duration.ofSeconds(8)).build();
        GcsLockRegistry e2 = GcsLockRegistry.builder(gcs.storage(), "leader").ttl(Duration.ofSeconds(8)).build();
        Candidate leader = new Candidate("leader");
        Candidate follower = new Candidate("follower");
        LockRegistryLeaderInitiator i1 = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(e1), leader);
        LockRegistryLeaderInitiator i2 = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(e2), follower);
        try {
            i1.start();
            await("the first candidate to lead").atMost(Duration.ofSeconds(30)).until(leader.leader::get);
            i2.start();
            Thread.sleep(1000); // the follower settles into its heartbeat
            Map<Operation, Long> before = gcs.faults().requestCounts();
            long start = System.nanoTime();
            Thread.sleep(4000);
            Map<Operation, Long> after = gcs.faults().requestCounts();
            double seconds = (System.nanoTime() - start) / 1e9;
            long gets = after.get(Operation.GET) - before.get(Operation.GET);
            long patches = after.get(Operation.PATCH) - before.get(Operation.PATCH);
            long creates = after.get(Operation.INSERT) - before.get(Operation.INSERT);
            long deletes = after.get(Operation.DELETE) - before.get(Operation.DELETE);
            // Each heartbeat of the follower is a new tryLock: its first attempt is a create (refused with 412,
            // nothing written), then it polls with reads until the heartbeat's wait runs out.
            System.out.printf("FOLLOWER requests over %.1f s (leader + follower, heartbeat 500 ms): %d GET, %d create attempts"
                    + " (refused), %d delete, %d PATCH (leader's refreshes) = follower %.0f requests/minute%n", seconds, gets, creates,
                    deletes, patches, (gets + creates + deletes) * 60 / seconds);
            assertThat(deletes).as("the follower never deletes the live leader's lock object").isZero();
            assertThat(patches).as("the leader keeps refreshing undisturbed").isPositive();
            assertThat(leader.leader).isTrue();
            assertThat(follower.leader).isFalse();
        } finally {
            i1.destroy();
            i2.destroy();
            e1.close();
            e2.close();
            gcs.close();
        }
    }

    @Test
    void theFollowerTakesOverWhenTheLeadersLockIsLost() {
        String bucket = SharedEmulator.newBucket();
        GcsLockRegistry e1 = SharedEmulator.otherInstance(bucket);
        GcsLockRegistry e2 = SharedEmulator.otherInstance(bucket);
        Candidate c1 = new Candidate("one");
        Candidate c2 = new Candidate("two");
        LockRegistryLeaderInitiator i1 = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(e1), c1);
        LockRegistryLeaderInitiator i2 = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(e2), c2);
        try {
            i1.start();
            await("candidate 'one' to lead").atMost(Duration.ofSeconds(30)).until(c1.leader::get);
            i2.start();
            // An administrator deletes the leader's lock object: the leader's lease is lost at its next refresh,
            // its heartbeat revokes leadership, and exactly one of the two becomes leader again.
            SharedEmulator.GCS.storage().delete(com.google.cloud.storage.BlobId.of(bucket, "gcslock/cluster-leader"));
            await("leadership to be granted again after the leader's lock object was deleted")
                    .atMost(Duration.ofSeconds(30)).until(() -> c2.leader.get() || c1.grants.get() > 1);
            await("exactly one of the two candidates to lead")
                    .atMost(Duration.ofSeconds(30)).until(() -> c1.leader.get() ^ c2.leader.get());
        } finally {
            i1.destroy();
            i2.destroy();
            e1.close();
            e2.close();
        }
    }

    /** A message handler that records overlapping runs per key. */
    static final class Worker {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicBoolean overlap = new AtomicBoolean();
        final AtomicInteger runs = new AtomicInteger();

        public void handle(String payload) throws InterruptedException {
            if (inside.incrementAndGet() > 1) {
                overlap.set(true);
            }
            runs.incrementAndGet();
            Thread.sleep(20);
            inside.decrementAndGet();
        }
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @org.springframework.integration.config.EnableIntegration
    static class IntegrationInfrastructure {
    }

    private static final org.springframework.context.annotation.AnnotationConfigApplicationContext INTEGRATION =
            new org.springframework.context.annotation.AnnotationConfigApplicationContext(IntegrationInfrastructure.class);

    private static ServiceActivatingHandler lockedHandler(GcsLockRegistry engine, Worker worker, Duration wait) throws Exception {
        org.springframework.beans.factory.BeanFactory beanFactory = INTEGRATION.getBeanFactory();
        LockRequestHandlerAdvice advice = new LockRequestHandlerAdvice(new GcsIntegrationLockRegistry(engine),
                (java.util.function.Function<org.springframework.messaging.Message<?>, Object>) m -> m.getHeaders().get("key"));
        advice.setWaitLockDuration(wait);
        advice.setBeanFactory(beanFactory);
        advice.afterPropertiesSet();
        ServiceActivatingHandler handler = new ServiceActivatingHandler(worker, "handle");
        handler.setAdviceChain(List.of(advice));
        handler.setBeanFactory(beanFactory);
        handler.afterPropertiesSet();
        return handler;
    }

    @Test
    void lockRequestHandlerAdviceSerialisesAKeyAcrossInstances() throws Exception {
        String bucket = SharedEmulator.newBucket();
        GcsLockRegistry e1 = SharedEmulator.otherInstance(bucket);
        GcsLockRegistry e2 = SharedEmulator.otherInstance(bucket);
        Worker worker = new Worker(); // shared: overlapping runs of one key on either instance show up here
        ServiceActivatingHandler h1 = lockedHandler(e1, worker, Duration.ofSeconds(20));
        ServiceActivatingHandler h2 = lockedHandler(e2, worker, Duration.ofSeconds(20));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                ServiceActivatingHandler h = i % 2 == 0 ? h1 : h2;
                int n = i;
                sent.add(pool.submit(() -> h.handleMessage(MessageBuilder.withPayload("m" + n).setHeader("key", "account-7").build())));
            }
            for (Future<?> f : sent) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
            e1.close();
            e2.close();
        }
        assertThat(worker.overlap).as("two messages of one key handled at once").isFalse();
        assertThat(worker.runs).hasValue(12);
    }

    @Test
    void lockRequestHandlerAdviceTimesOutWhileAnotherInstanceHoldsTheKey() throws Exception {
        String bucket = SharedEmulator.newBucket();
        GcsLockRegistry e1 = SharedEmulator.otherInstance(bucket);
        GcsLockRegistry e2 = SharedEmulator.otherInstance(bucket);
        Worker worker = new Worker();
        ServiceActivatingHandler handler = lockedHandler(e1, worker, Duration.ofMillis(300));
        try (var held = e2.tryAcquire("account-7").orElseThrow()) {
            assertThatThrownBy(() -> handler.handleMessage(MessageBuilder.withPayload("m").setHeader("key", "account-7").build()))
                    .isInstanceOf(MessageHandlingException.class).hasRootCauseInstanceOf(TimeoutException.class);
            assertThat(worker.runs).hasValue(0);
        } finally {
            e1.close();
            e2.close();
        }
    }
}
