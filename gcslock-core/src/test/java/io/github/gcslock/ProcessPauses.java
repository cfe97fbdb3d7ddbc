package io.github.gcslock;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;

/**
 * The test JVM's own pauses, as a thread that asks to sleep 5 ms at a time sees them (a GC, or a machine too loaded
 * to run the JVM's threads on time). The API explorer's "world without faults" injects no fault, but a process that
 * does not run for a while is the pause of DESIGN.md rule 11 all the same: a lease of a short TTL may rightly be lost
 * to it. The explorer excuses such a loss only when the pauses it saw add up to more than the lease's slack.
 */
final class ProcessPauses {
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /** Lateness below this is scheduling noise, not a pause. */
    private static final long NOISE_NANOS = TimeUnit.MILLISECONDS.toNanos(15);
    private static final long KEEP_NANOS = TimeUnit.SECONDS.toNanos(120);
    /** {end, length} of each pause seen, oldest first. */
    private static final ConcurrentLinkedDeque<long[]> SEEN = new ConcurrentLinkedDeque<>();

    static {
        Thread probe = new Thread(ProcessPauses::watch, "process-pauses");
        probe.setDaemon(true);
        probe.start();
    }

    private ProcessPauses() {
    }

    private static void watch() {
        while (true) {
            long before = System.nanoTime();
            try {
                TimeUnit.NANOSECONDS.sleep(TICK_NANOS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long late = now - before - TICK_NANOS;
            if (late > NOISE_NANOS) {
                SEEN.addLast(new long[] {now, late});
            }
            for (long[] p = SEEN.peekFirst(); p != null && now - p[0] > KEEP_NANOS; p = SEEN.peekFirst()) {
                SEEN.pollFirst();
            }
        }
    }

    /** Starts the probe (class initialisation); call once before the runs it should watch. */
    static void start() {
    }

    /** The sum of the pauses that ended within [from, to] (System.nanoTime), in nanoseconds. */
    static long within(long from, long to) {
        long sum = 0;
        for (long[] p : SEEN) {
            if (p[0] - from >= 0 && to - p[0] >= 0) {
                sum += p[1];
            }
        }
        return sum;
    }
}
