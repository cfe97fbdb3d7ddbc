package io.github.gcslock;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Threads and waits for the interleaving tests that drive the engine from several threads of their own. */
final class TestThreads {

    private TestThreads() {
    }

    /**
     * Waits up to {@code seconds} for {@code latch} whatever interrupts come (the engine may interrupt its own thread,
     * and a hook runs on it); the flag is given back. True if it was counted down.
     */
    static boolean awaitUninterruptibly(CountDownLatch latch, long seconds) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return latch.await(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Sleeps {@code ms}; an interrupt ends it early and is given back. */
    static void nap(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs {@code body} on a new daemon thread named {@code name} (a hung engine call must not keep the test JVM alive);
     * the latch is counted down when it ends, however. What it threw is left to the test to judge from the bucket and
     * its own latches.
     */
    static CountDownLatch daemon(String name, Runnable body) {
        return daemon(name, null, body);
    }

    /** As {@link #daemon(String, Runnable)}; the thread is put in {@code self} (if not null) before it starts. */
    static CountDownLatch daemon(String name, java.util.concurrent.atomic.AtomicReference<Thread> self, Runnable body) {
        CountDownLatch done = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                // judged by the test from what it observes
            } finally {
                done.countDown();
            }
        }, name);
        t.setDaemon(true);
        if (self != null) {
            self.set(t);
        }
        t.start();
        return done;
    }

    /** Whether a thread is blocked entering {@code monitor}. */
    static boolean blockedOn(Object monitor) {
        for (java.lang.management.ThreadInfo t : java.lang.management.ManagementFactory.getThreadMXBean().dumpAllThreads(true, false)) {
            if (t.getThreadState() == Thread.State.BLOCKED && t.getLockInfo() != null
                    && t.getLockInfo().getIdentityHashCode() == System.identityHashCode(monitor)) {
                return true;
            }
        }
        return false;
    }
}
