package io.github.gcslock.spring;

import java.lang.reflect.Method;

/** A {@link GcsLocked} method with {@link IfLocked#SKIP} did not run because the lock was held elsewhere. */
public class GcsLockSkippedEvent extends GcsLockEvent {

    private final transient Method method;

    public GcsLockSkippedEvent(Object source, String lockName, Method method) {
        super(source, lockName);
        this.method = method;
    }

    /** The method that was skipped. */
    public Method method() {
        return method;
    }
}
