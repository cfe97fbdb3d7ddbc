package io.github.gcslock;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * Internal seam, not API: where the engine gets its threads and how it waits for time to pass. {@link #REAL}
 * (the only one outside tests) is real threads and real time. A test may substitute a deterministic runtime
 * in virtual time (an explorer of the engine's interleavings) through {@code GcsLockRegistry.Builder#runtime}:
 * then it, not the OS, decides when the refresh timer, the refresh threads, the deadline thread and the event
 * threads run, and when a timed wait ends. The engine's behaviour is the same with either.
 */
interface EngineRuntime {

    /** Real threads, real time: what the engine always did. */
    EngineRuntime REAL = new EngineRuntime() {
        @Override
        public ScheduledExecutorService timer(ThreadFactory threads) {
            ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, threads);
            timer.setRemoveOnCancelPolicy(true);
            return timer;
        }

        @Override
        public ExecutorService refreshThreads(int maxThreads, Duration keepAlive, ThreadFactory threads) {
            return new RefreshThreads(maxThreads, keepAlive, threads);
        }

        @Override
        public ExecutorService eventThreads(ThreadFactory threads) {
            return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), threads);
        }

        @Override
        public boolean await(CountDownLatch latch, long nanos) throws InterruptedException {
            return latch.await(nanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public boolean tryAcquire(Semaphore permit, long nanos) throws InterruptedException {
            return permit.tryAcquire(nanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void sleep(long nanos) throws InterruptedException {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public RandomGenerator random() {
            return ThreadLocalRandom.current();
        }

        @Override
        public String randomId(int bytes) {
            return ProcessIdentity.randomHex(bytes);
        }
    };

    /** A single-thread scheduler (the refresh timer, the deadline thread), whose cancelled tasks leave its queue. */
    ScheduledExecutorService timer(ThreadFactory threads);

    /** The refresh threads: a thread per task while every thread is busy, up to {@code maxThreads} ({@link RefreshThreads}). */
    ExecutorService refreshThreads(int maxThreads, Duration keepAlive, ThreadFactory threads);

    /** The listener threads of the event dispatcher: as many as the locks with events running. */
    ExecutorService eventThreads(ThreadFactory threads);

    /** Waits up to {@code nanos} for {@code latch}; true if it was counted down. */
    boolean await(CountDownLatch latch, long nanos) throws InterruptedException;

    /** Waits up to {@code nanos} for a permit of {@code permit}; true if this call took one. */
    boolean tryAcquire(Semaphore permit, long nanos) throws InterruptedException;

    /**
     * The source of the engine's jitter: the backoff, the poll interval, the write window's and the first refresh's
     * spread (rules 10 and 16). Real: {@link ThreadLocalRandom}. A deterministic runtime gives a seeded generator, so
     * that one seed replays one schedule (jitter drawn from elsewhere moves virtual time differently on every run).
     */
    RandomGenerator random();

    /**
     * A random id of {@code bytes} bytes in hex: a registry's owner id, a lease id, a refresh id (what makes "this
     * object is ours" trustworthy, rules 3 and 8). Real: {@link java.security.SecureRandom}. A deterministic runtime
     * draws them from its seed, for the same reason as {@link #random()}: the engine keeps leases in maps keyed by
     * their ids, and a close() releases them in that order.
     */
    String randomId(int bytes);

    /** Sleeps {@code nanos} (a real wait, such as GCS's write window; not the registry's ticker). */
    void sleep(long nanos) throws InterruptedException;

    /**
     * A step of the engine whose order other threads can see (a release begun, the name freed, close() between its
     * phases): a test's runtime may let its other threads run first here (the interleaving explorer decides when this
     * thread goes on). Nothing in {@link #REAL}.
     */
    default void yieldPoint(String step) {
    }

    /** The time {@link #sleep} counts in, in nanoseconds. */
    long nanoTime();

    /**
     * Sleeps until {@code clock} (the registry's ticker) reads {@code endNanos}, but never longer than that rest in
     * this runtime's own time (a test's clock may stand still); an interrupt does not end the sleep. The write-window
     * waits of rule 21 use it. True if an interrupt came: the caller gives the flag back.
     */
    default boolean sleepUntilIgnoringInterrupts(long endNanos, LongSupplier clock) {
        boolean interrupted = false;
        long left = endNanos - clock.getAsLong();
        long realEnd = nanoTime() + left;
        while (left > 0) {
            try {
                sleep(left);
            } catch (InterruptedException e) {
                interrupted = true;
            }
            left = Math.min(endNanos - clock.getAsLong(), realEnd - nanoTime());
        }
        return interrupted;
    }
}
