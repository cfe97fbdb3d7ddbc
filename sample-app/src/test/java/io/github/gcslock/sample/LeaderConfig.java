package io.github.gcslock.sample;

import io.github.gcslock.spring.GcsIntegrationLockRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

@Configuration(proxyBeanMethods = false)
public class LeaderConfig {

    // One leader among the instances that share gcslock.bucket; started and stopped with the application.
    @Bean
    LockRegistryLeaderInitiator leaderInitiator(GcsIntegrationLockRegistry locks) {
        return new LockRegistryLeaderInitiator(locks, new DefaultCandidate("my-service", "my-service-leader") {
            @Override
            public void onGranted(Context context) {
                // this instance leads now: start the leader-only work (on another thread; return at once)
            }

            @Override
            public void onRevoked(Context context) {
                // stop that work: another instance may lead now
            }
        });
    }
}
