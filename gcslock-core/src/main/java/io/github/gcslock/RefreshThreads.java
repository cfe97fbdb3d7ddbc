package io.github.gcslock;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that send refreshes (and run delayed releases): a pool that starts a thread whenever a task
 * comes and none is idle, up to {@code maxThreads}, and lets a thread go after it has been idle for
 * {@code keepAlive} (DESIGN.md "Refresh capacity"). So the number of refreshes in flight follows the demand
 * (held leases ÷ interval × reply time) and a refresh never waits behind another lease's slow request —
 * until {@code maxThreads} requests are in flight at once; beyond that, tasks queue (first in, first out).
 *
 * <p>A plain {@link ThreadPoolExecutor} cannot do this: it queues as soon as its core threads are busy and
 * grows only when the queue is full. Here the queue refuses a task while the pool may still grow and no
 * thread is idle, which makes the executor start a thread.
 */
final class RefreshThreads extends ThreadPoolExecutor {

    /** Tasks handed to the pool and not yet finished (running or queued). */
    private final AtomicInteger inFlight = new AtomicInteger();

    RefreshThreads(int maxThreads, Duration keepAlive, ThreadFactory threads) {
        super(0, maxThreads, keepAlive.toNanos(), TimeUnit.NANOSECONDS, new DemandQueue(), threads);
        ((DemandQueue) getQueue()).pool = this;
    }

    @Override
    public void execute(Runnable task) {
        inFlight.incrementAndGet();
        try {
            super.execute(task);
        } catch (RejectedExecutionException e) {
            // The queue refused because the pool looked able to grow, but it reached its bound meanwhile.
            if (!isShutdown() && ((DemandQueue) getQueue()).force(task)) {
                return;
            }
            inFlight.decrementAndGet();
            throw e;
        }
    }

    @Override
    protected void afterExecute(Runnable r, Throwable t) {
        inFlight.decrementAndGet();
    }

    private static final class DemandQueue extends LinkedBlockingQueue<Runnable> {

        private RefreshThreads pool;

        @Override
        public boolean offer(Runnable task) {
            int threads = pool.getPoolSize();
            if (threads >= pool.getMaximumPoolSize() || pool.inFlight.get() <= threads) {
                return super.offer(task); // at the bound, or a thread is idle and takes it
            }
            return false; // every thread is busy: the executor starts one more
        }

        boolean force(Runnable task) {
            return super.offer(task);
        }
    }
}
