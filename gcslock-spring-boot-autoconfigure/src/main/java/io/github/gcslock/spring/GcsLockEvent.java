package io.github.gcslock.spring;

import org.springframework.context.ApplicationEvent;

/** Base of the application events gcslock publishes; {@link #lockName()} names the lock. */
public abstract class GcsLockEvent extends ApplicationEvent {

    private final String lockName;

    protected GcsLockEvent(Object source, String lockName) {
        super(source);
        this.lockName = lockName;
    }

    public String lockName() {
        return lockName;
    }
}
