package io.github.gcslock.spring;

import io.github.gcslock.GcsLockRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Spring Integration's LockRegistryLeaderInitiator elects one leader through GCS locks. */
class LeaderElectionTest {

    static final class Candidate extends DefaultCandidate {
        final AtomicBoolean leader = new AtomicBoolean();

        Candidate(String id) {
            super(id, "cluster-leader");
        }

        @Override
        public void onGranted(Context ctx) {
            leader.set(true);
        }

        @Override
        public void onRevoked(Context ctx) {
            leader.set(false);
        }
    }

    @Test
    void exactlyOneLeaderAndTheOtherTakesOverWhenItStops() {
        String bucket = SharedEmulator.newBucket();
        GcsLockRegistry r1 = SharedEmulator.otherInstance(bucket);
        GcsLockRegistry r2 = SharedEmulator.otherInstance(bucket);
        Candidate c1 = new Candidate("one");
        Candidate c2 = new Candidate("two");
        LockRegistryLeaderInitiator i1 = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(r1), c1);
        LockRegistryLeaderInitiator i2 = new LockRegistryLeaderInitiator(new GcsIntegrationLockRegistry(r2), c2);
        for (LockRegistryLeaderInitiator i : new LockRegistryLeaderInitiator[]{i1, i2}) {
            i.setHeartBeatMillis(100);
            i.setBusyWaitMillis(50);
        }
        try {
            i1.start();
            i2.start();
            await("one of the two candidates to lead")
                    .atMost(Duration.ofSeconds(30)).until(() -> c1.leader.get() || c2.leader.get());
            // Several heartbeats later there is still exactly one.
            for (int n = 0; n < 10; n++) {
                assertThat(c1.leader.get() ^ c2.leader.get()).isTrue();
                sleep(50);
            }
            LockRegistryLeaderInitiator leader = c1.leader.get() ? i1 : i2;
            Candidate follower = c1.leader.get() ? c2 : c1;
            leader.destroy();
            await("the follower to lead after the leader's initiator was destroyed")
                    .atMost(Duration.ofSeconds(30)).until(follower.leader::get);
        } finally {
            i1.destroy();
            i2.destroy();
            r1.close();
            r2.close();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
