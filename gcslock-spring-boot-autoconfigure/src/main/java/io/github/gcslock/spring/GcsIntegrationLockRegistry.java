package io.github.gcslock.spring;

import io.github.gcslock.LockRegistry;

import java.util.concurrent.locks.Lock;

/**
 * Spring Integration's {@code LockRegistry} backed by GCS locks, so that
 * {@code LockRegistryLeaderInitiator} gives leader election without a database or Redis.
 * Keys are turned into lock names with {@code toString()}.
 */
public class GcsIntegrationLockRegistry implements org.springframework.integration.support.locks.LockRegistry<Lock> {

    private final LockRegistry locks;

    public GcsIntegrationLockRegistry(LockRegistry locks) {
        this.locks = locks;
    }

    @Override
    public Lock obtain(Object lockKey) {
        return locks.obtain(String.valueOf(lockKey));
    }
}
