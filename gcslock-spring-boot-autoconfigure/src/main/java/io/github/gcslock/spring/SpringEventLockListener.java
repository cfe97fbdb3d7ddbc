package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.github.gcslock.LockEventListener;
import io.github.gcslock.LockLostException;
import org.springframework.context.ApplicationEventPublisher;

/** Publishes the registry's acquisitions, releases and losses as Spring application events. */
public class SpringEventLockListener implements LockEventListener {

    private final ApplicationEventPublisher publisher;

    public SpringEventLockListener(ApplicationEventPublisher publisher) {
        this.publisher = publisher;
    }

    @Override
    public void acquired(Lease lease) {
        publisher.publishEvent(new GcsLockAcquiredEvent(this, lease));
    }

    @Override
    public void released(Lease lease) {
        publisher.publishEvent(new GcsLockReleasedEvent(this, lease));
    }

    @Override
    public void lost(Lease lease, LockLostException reason) {
        publisher.publishEvent(new GcsLockLostEvent(this, lease, reason));
    }
}
