package io.github.gcslock.spring;

import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;

import java.util.HashSet;
import java.util.Set;

/**
 * The {@code @GcsLocked} calls that are waiting for a lock, so that closing the application context ends their
 * waits at once. Without it, a {@code WAIT} job waiting for another instance's lock keeps its scheduler thread
 * busy: Spring waits for it for the whole {@code spring.lifecycle.timeout-per-shutdown-phase} (30 s by default),
 * then closing the registry ends the wait with an ERROR and a stack trace from the scheduler.
 *
 * <p>On {@link ContextClosedEvent} (published before the scheduler and other lifecycle beans stop) the waiting
 * threads are interrupted, and the interceptor turns that interrupt into one INFO line: the method did not run.
 * A call that would start waiting after the event does not wait.
 */
public class GcsLockedWaits implements ApplicationListener<ContextClosedEvent>, ApplicationContextAware {

    /** A wait for a lock. */
    @FunctionalInterface
    public interface Wait<T> {
        T run() throws InterruptedException;
    }

    private final Set<Thread> waiting = new HashSet<>(); // guarded by this
    private final Set<Thread> interrupted = new HashSet<>(); // guarded by this
    private boolean closing; // guarded by this
    private ApplicationContext context;

    @Override
    public void setApplicationContext(ApplicationContext context) {
        this.context = context;
    }

    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        if (context != null && event.getApplicationContext() != context) {
            return; // a child context closing (a management context, a refresh scope's): this application goes on
        }
        synchronized (this) {
            closing = true;
            for (Thread t : waiting) {
                interrupted.add(t);
                t.interrupt();
            }
        }
    }

    /** Whether the context is closing: a call must not start waiting. */
    public synchronized boolean closing() {
        return closing;
    }

    /**
     * Runs {@code wait} as a wait that closing the context ends.
     *
     * @throws ClosedWhileWaiting when the context closed before or while it waited (the interrupt is cleared)
     */
    public <T> T await(Wait<T> wait) throws InterruptedException {
        Thread me = Thread.currentThread();
        synchronized (this) {
            if (closing) {
                throw new ClosedWhileWaiting();
            }
            waiting.add(me);
        }
        boolean ours;
        try {
            return wait.run();
        } catch (InterruptedException | RuntimeException e) {
            // The engine may also end an interrupted wait with a GcsLockException (a request cut short).
            synchronized (this) {
                ours = interrupted.contains(me);
            }
            if (ours) {
                throw new ClosedWhileWaiting();
            }
            throw e;
        } finally {
            synchronized (this) {
                waiting.remove(me);
                if (interrupted.remove(me)) {
                    Thread.interrupted(); // our interrupt, not the caller's: do not leave it set
                }
            }
        }
    }

    /** The context closed before or while a call waited for its lock. */
    public static final class ClosedWhileWaiting extends RuntimeException {
        ClosedWhileWaiting() {
            super("the application context is closing", null, false, false);
        }
    }
}
