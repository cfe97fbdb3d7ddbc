package io.github.gcslock.test;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Faults of one client of a {@link GcsEmulator}: what the network does to the requests of one process
 * while the others go on undisturbed. A named client talks to its own endpoint of the emulator
 * ({@link GcsEmulator#endpoint(String)}, used by {@link GcsEmulator#storage(String)}), so every client
 * derived from its options — as a lock engine derives its bounded clients — is that client too; get
 * its faults with {@link Faults#client(String)}. Thread-safe; every setter takes effect for the next
 * request.
 *
 * <pre>{@code
 * Storage a = gcs.storage("a");           // talks to a's own endpoint of the emulator
 * gcs.faults().client("a").partition(ClientFaults.Partition.HANG);
 * ...                                     // a's requests hang; other clients are served
 * gcs.faults().client("a").heal();
 * }</pre>
 *
 * <p>Applied to each request of the client before the emulator-wide {@link Faults} (after counting):
 * a partition first, then (after the latency and actions) a failure queued by {@link #failNext}, then, once
 * the request has been processed, a slow reply.
 */
public final class ClientFaults {

    /** What a partition does to the client's requests. */
    public enum Partition {
        /** Every request is refused at once: the connection closes without a reply; nothing is processed. */
        FAIL,
        /**
         * Every request hangs until {@link #heal()}, then the connection closes without a reply; nothing is
         * processed (the packets were lost). The client usually times out first.
         */
        HANG,
        /**
         * Every request hangs until {@link #heal()} and is then processed (delivered late, as the requests
         * of a process that was frozen, or queued in a congested network); its reply goes to a client that
         * has usually given up by then.
         */
        DELAY
    }

    private final String name;
    private final Object healed = new Object();
    private volatile Partition partition;
    private Partition armed;
    private Set<Operation> armedFor;
    /** Counts heals, so a request held by one partition is released even if another starts at once. */
    private long heals;
    private final AtomicInteger slowReplies = new AtomicInteger();
    private volatile long slowReplyNanos;
    private final AtomicLong partitionedRequests = new AtomicLong();
    private final AtomicLong slowedReplies = new AtomicLong();
    /** Failures {@link #failNext} queued: operation and status; guarded by {@code this}. */
    private final java.util.List<Failure> failures = new java.util.ArrayList<>();

    private record Failure(Operation operation, int status) {
    }

    ClientFaults(String name) {
        this.name = name;
    }

    /** The client's name, as given to {@link GcsEmulator#endpoint(String)}. */
    String name() {
        return name;
    }

    /** Cuts this client off from the emulator until {@link #heal()}, in the given way. */
    public ClientFaults partition(Partition mode) {
        synchronized (healed) {
            this.partition = Objects.requireNonNull(mode, "mode");
        }
        return this;
    }

    /**
     * Starts a partition in the middle of the client's next request of one of {@code operations} (of any
     * operation when none is given): that request is processed (it commits) but its reply is lost, and
     * every later request meets the partition {@code mode} until {@link #heal()}. The client cannot tell
     * whether that request happened. Requests before it are served normally.
     */
    public ClientFaults partitionAfterNextRequest(Partition mode, Operation... operations) {
        synchronized (healed) {
            this.armed = Objects.requireNonNull(mode, "mode");
            this.armedFor = operations.length == 0 ? EnumSet.allOf(Operation.class)
                    : EnumSet.of(operations[0], operations);
        }
        return this;
    }

    /** Ends a partition: held requests are released (dropped, or processed for {@link Partition#DELAY}). */
    public ClientFaults heal() {
        synchronized (healed) {
            partition = null;
            armed = null;
            heals++;
            healed.notifyAll();
        }
        return this;
    }

    /** Whether a partition is on. */
    public boolean isPartitioned() {
        return partition != null;
    }

    /**
     * Processes the next {@code count} requests of this client at once (they commit) but holds each reply
     * back for {@code delay}: set it beyond the client's timeout for "a slow reply that still commits".
     */
    public ClientFaults slowReplies(int count, Duration delay) {
        if (count < 0 || delay.isNegative()) {
            throw new IllegalArgumentException("slowReplies needs count >= 0 and delay >= 0, got " + count + ", " + delay);
        }
        this.slowReplyNanos = delay.toNanos();
        this.slowReplies.set(count);
        return this;
    }

    /**
     * Answers the next {@code count} requests of {@code operation} of this client with {@code status} (e.g. 503)
     * without processing them, as {@link Faults#failNext(int, int, Operation)} does for every client's: other
     * clients are served. Applied after the client's partition, before the emulator-wide faults.
     */
    public synchronized ClientFaults failNext(int count, int status, Operation operation) {
        Objects.requireNonNull(operation, "operation");
        for (int i = 0; i < count; i++) {
            failures.add(new Failure(operation, status));
        }
        return this;
    }

    /** Failures {@link #failNext} queued that no request has met yet. */
    public synchronized int pendingFailures() {
        return failures.size();
    }

    /** Drops the failures {@link #failNext} queued that no request has met yet. */
    public synchronized ClientFaults clearFailures() {
        failures.clear();
        return this;
    }

    /** Requests of this client that met a partition. */
    public long partitionedRequests() {
        return partitionedRequests.get();
    }

    /** Replies of this client that were held back by {@link #slowReplies}. */
    public long slowedReplies() {
        return slowedReplies.get();
    }

    /** Removes every fault of this client (held requests are released as by {@link #heal()}). */
    public ClientFaults reset() {
        slowReplies.set(0);
        clearFailures();
        return heal();
    }

    // ---- used by the server ----

    /** What happens to a request that has just arrived. */
    enum Admission { PROCESS, REFUSE, PROCESS_AND_LOSE_REPLY }

    /**
     * Applies a partition to a request that has just arrived: whether to process it, refuse it (the caller
     * closes the connection without a reply), or process it and lose its reply. Blocks while a HANG or
     * DELAY lasts.
     */
    Admission admit(Operation op) throws InterruptedException {
        synchronized (healed) {
            if (armed != null && partition == null && armedFor.contains(op)) {
                partition = armed;
                armed = null;
                partitionedRequests.incrementAndGet();
                return Admission.PROCESS_AND_LOSE_REPLY;
            }
            Partition mode = partition;
            if (mode == null) {
                return Admission.PROCESS;
            }
            partitionedRequests.incrementAndGet();
            if (mode != Partition.FAIL) {
                long heal = heals;
                while (heals == heal) {
                    healed.wait();
                }
            }
            return mode == Partition.DELAY ? Admission.PROCESS : Admission.REFUSE;
        }
    }

    /** The status a failure queued by {@link #failNext} answers this request of {@code op} with, or null. */
    synchronized Integer takeFailure(Operation op) {
        for (java.util.Iterator<Failure> it = failures.iterator(); it.hasNext(); ) {
            Failure f = it.next();
            if (f.operation() == op) {
                it.remove();
                return f.status();
            }
        }
        return null;
    }

    /** Holds a processed request's reply back if a slow reply is due. */
    void beforeReply() throws InterruptedException {
        if (slowReplies.get() > 0 && slowReplies.getAndDecrement() > 0) {
            slowedReplies.incrementAndGet();
            TimeUnit.NANOSECONDS.sleep(slowReplyNanos);
        }
    }

    @Override
    public String toString() {
        return "ClientFaults[" + name + (partition != null ? ", partition " + partition : "") + "]";
    }
}
