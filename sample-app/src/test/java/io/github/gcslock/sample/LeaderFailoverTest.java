package io.github.gcslock.sample;

import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * README's leader election ({@link LeaderConfig}: {@code LockRegistryLeaderInitiator} on gcslock's
 * {@code GcsIntegrationLockRegistry}), each instance a Spring application of its own on one emulator, with
 * {@code gcslock.ttl=10s}: how long leadership takes to move after the leader crashes (its GCS traffic cut off:
 * no release, no refresh) and after it shuts down. Prints both times; the bounds asserted are for liveness
 * (generous, for a loaded machine) and for safety (no follower leads before the crashed leader's lock is stale,
 * and the old leader has stepped down by then).
 */
class LeaderFailoverTest {

    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration LIVENESS = Duration.ofSeconds(120);

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(LeaderConfig.class)
    static class Instance {
    }

    private GcsEmulator gcs;
    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    @BeforeEach
    void emulator() {
        gcs = GcsEmulator.start();
        gcs.createBucket("leader");
    }

    @AfterEach
    void stop() {
        instances.forEach(ConfigurableApplicationContext::close);
        gcs.close();
    }

    /** An instance whose GCS traffic goes through the emulator endpoint of {@code name}, so faults can cut it off. */
    private ConfigurableApplicationContext start(String name) {
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(Instance.class).web(WebApplicationType.NONE)
                .run("--spring.main.banner-mode=off", "--spring.application.name=" + name,
                        "--gcslock.emulator.embedded=false", "--gcslock.emulator.endpoint=" + gcs.endpoint(name),
                        "--gcslock.bucket=leader", "--gcslock.ttl=" + TTL.toSeconds() + "s",
                        "--gcslock.refresh-interval=1s"); // the default for a 10 s TTL (TTL/8, whole seconds)
        instances.add(ctx);
        return ctx;
    }

    private static boolean leads(ConfigurableApplicationContext ctx) {
        return ctx.isActive() && ctx.getBean(LockRegistryLeaderInitiator.class).getContext().isLeader();
    }

    @Test
    void leadershipMovesWithinTheTtlAndAPollAfterACrashAndWithinSecondsAfterAShutdown() {
        ConfigurableApplicationContext first = start("first");
        await("instance 'first' to lead").atMost(LIVENESS).until(() -> leads(first));
        ConfigurableApplicationContext second = start("second");

        // Crash: every request of 'first' refused unprocessed from now on (no refresh, no release).
        long crashed = System.nanoTime();
        gcs.faults().client("first").partition(ClientFaults.Partition.FAIL);
        boolean[] firstLeadAtTakeover = new boolean[1];
        await("instance 'second' to lead after 'first' crashed").atMost(LIVENESS).pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    boolean taken = leads(second);
                    firstLeadAtTakeover[0] = taken && leads(first);
                    return taken;
                });
        Duration crashFailover = Duration.ofNanos(System.nanoTime() - crashed);
        assertThat(firstLeadAtTakeover[0]).as("the crashed leader stepped down before another took over").isFalse();
        // Its last confirmed refresh was at most one refresh interval (1 s) before the crash.
        assertThat(crashFailover).as("no takeover before the lock is stale").isGreaterThan(TTL.minusSeconds(1));

        // Shutdown: 'second' closes (the initiator stops and releases), a new instance 'third' takes over.
        ConfigurableApplicationContext third = start("third");
        await("instance 'third' to start following").atMost(LIVENESS).during(Duration.ofSeconds(2)).until(() -> !leads(third));
        long stopped = System.nanoTime();
        second.close();
        await("instance 'third' to lead after 'second' shut down").atMost(LIVENESS).pollInterval(Duration.ofMillis(20))
                .until(() -> leads(third));
        Duration shutdownFailover = Duration.ofNanos(System.nanoTime() - stopped);
        System.out.printf("LEADER failover with gcslock.ttl=%ds: after a crash %d ms, after a shutdown %d ms%n",
                TTL.toSeconds(), crashFailover.toMillis(), shutdownFailover.toMillis());
        assertThat(shutdownFailover).as("a released leadership passes on without waiting for the TTL").isLessThan(TTL);
    }
}
