package io.github.gcslock.test;

import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault injection and request counters of one {@link GcsEmulator}. Every setter takes effect for the
 * next request and returns {@code this} so calls chain. Thread-safe.
 *
 * <p>Faults are applied in this order to each request: counting, latency, a queued action
 * ({@link #beforeNext}), "fail next N", then the operation itself, then the "drop the reply" decision
 * (the operation has committed by then). Faults of one client ({@link #client(String)}: partitions,
 * slow replies) come first and last: a partitioned client's request goes no further, and a slow reply
 * is held back after the operation has committed.
 *
 * <p>How the emulated GCS behaves when nothing goes wrong — its per-object write-rate limit and its
 * clock — is not a fault: see {@link GcsEmulator#writeRateLimit(Duration)} and
 * {@link GcsEmulator#clockOffset(Duration)}; {@link #reset()} leaves those settings alone.
 */
public final class Faults {

    private final Map<Operation, AtomicLong> counters = new EnumMap<>(Operation.class);
    private final Map<Operation, AtomicLong> successes = new EnumMap<>(Operation.class);
    private final ConcurrentLinkedQueue<PendingFailure> pendingFailures = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<PendingAction> pendingActions = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Operation> pendingDrops = new ConcurrentLinkedQueue<>();
    private volatile long latencyMinNanos;
    private volatile long latencyMaxNanos;
    private volatile double dropProbability;
    private volatile Set<Operation> dropOperations = EnumSet.allOf(Operation.class);
    private final AtomicLong injected = new AtomicLong();
    private final AtomicLong rateLimited = new AtomicLong();
    private Random random = new Random();
    private final Map<String, ClientFaults> clients = new ConcurrentHashMap<>();
    private final Map<Integer, ClientFaults> clientPorts = new ConcurrentHashMap<>();
    private volatile boolean logging;
    private final ConcurrentLinkedQueue<LoggedRequest> log = new ConcurrentLinkedQueue<>();

    Faults() {
        for (Operation op : Operation.values()) {
            counters.put(op, new AtomicLong());
            successes.put(op, new AtomicLong());
        }
    }

    /** Delays every request by a uniformly random time in {@code [min, max]} before it is processed. */
    public Faults latency(Duration min, Duration max) {
        if (min.isNegative() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("latency needs 0 <= min <= max, got min=" + min + " max=" + max);
        }
        this.latencyMinNanos = min.toNanos();
        this.latencyMaxNanos = max.toNanos();
        return this;
    }

    /** Answers the next {@code count} requests of any operation with {@code status} (e.g. 503, 429). */
    public Faults failNext(int count, int status) {
        return failNext(count, status, null);
    }

    /** Answers the next {@code count} requests of {@code operation} with {@code status}, without processing them. */
    public Faults failNext(int count, int status, Operation operation) {
        for (int i = 0; i < count; i++) {
            pendingFailures.add(new PendingFailure(operation, status));
        }
        return this;
    }

    /**
     * With {@code probability}, commits a request of one of {@code operations} (all when none given)
     * and then closes the connection instead of replying: the "lost response" of a real network.
     */
    public Faults dropReplies(double probability, Operation... operations) {
        if (probability < 0 || probability > 1) {
            throw new IllegalArgumentException("probability must be within [0, 1], got " + probability);
        }
        this.dropOperations = operations.length == 0 ? EnumSet.allOf(Operation.class) : EnumSet.of(operations[0], operations);
        this.dropProbability = probability;
        return this;
    }

    /** Commits the next request of {@code operation} and drops its reply (deterministic form of {@link #dropReplies}). */
    public Faults dropNextReply(Operation operation) {
        pendingDrops.add(Objects.requireNonNull(operation));
        return this;
    }

    /**
     * Runs {@code action} once, just before the next request of {@code operation} is processed (after
     * its latency). The action may itself call the emulator: it runs on the request's server thread
     * and the server has more. Lets a test place another client's request inside a race window.
     */
    public Faults beforeNext(Operation operation, Runnable action) {
        pendingActions.add(new PendingAction(Objects.requireNonNull(operation), null, Objects.requireNonNull(action)));
        return this;
    }

    /**
     * As {@link #beforeNext(Operation, Runnable)}, for the next request of {@code operation} on the object
     * named {@code objectName} only. An action that blocks holds that one request back (it is processed,
     * and commits, when the action returns) while requests on other objects are served: "a slow reply of
     * one lock object that still commits".
     */
    public Faults beforeNext(Operation operation, String objectName, Runnable action) {
        pendingActions.add(new PendingAction(Objects.requireNonNull(operation), Objects.requireNonNull(objectName),
                Objects.requireNonNull(action)));
        return this;
    }

    /** Seeds the random source used for latency and dropped replies, so a run can be replayed. */
    public synchronized Faults seed(long seed) {
        this.random = new Random(seed);
        return this;
    }

    /**
     * The faults of the client named {@code name} (the requests sent to {@link GcsEmulator#endpoint(String)},
     * e.g. by {@link GcsEmulator#storage(String)}): a partition of that client alone, or slow replies to
     * it. Created on first use.
     */
    public ClientFaults client(String name) {
        return clients.computeIfAbsent(Objects.requireNonNull(name, "name"), ClientFaults::new);
    }

    /**
     * Removes every fault, those of every client included. Counters are kept (see {@link #resetCounters()}),
     * and so are the emulator's settings (write-rate limit, clock offset).
     */
    public Faults reset() {
        clients.values().forEach(ClientFaults::reset);
        pendingFailures.clear();
        pendingActions.clear();
        pendingDrops.clear();
        latencyMinNanos = 0;
        latencyMaxNanos = 0;
        dropProbability = 0;
        return this;
    }

    /** Requests received for {@code operation} since start or the last {@link #resetCounters()}, faulted ones included. */
    public long requestCount(Operation operation) {
        return counters.get(operation).get();
    }

    /** Requests received for every operation. */
    public long totalRequests() {
        return counters.values().stream().mapToLong(AtomicLong::get).sum();
    }

    /** Object requests only (insert, get, patch, update, delete, list): what a lock engine spends. */
    public long objectRequests() {
        return totalRequests() - requestCount(Operation.BUCKET_GET) - requestCount(Operation.BUCKET_INSERT)
                - requestCount(Operation.BUCKET_LIST)
                - requestCount(Operation.BUCKET_DELETE);
    }

    /**
     * A snapshot of the per-operation counts of requests that the emulator answered with a 2xx status
     * (whether or not the reply then reached the client): the requests GCS bills. GCS's pricing page says
     * that operations answered with 307, 4xx or 5xx are generally not charged, so a create refused with
     * 412 or a read answered 404 costs nothing; {@link #requestCounts()} counts those too.
     */
    public Map<Operation, Long> successfulRequestCounts() {
        Map<Operation, Long> copy = new EnumMap<>(Operation.class);
        successes.forEach((op, n) -> copy.put(op, n.get()));
        return copy;
    }

    /** A snapshot of the per-operation counters. */
    public Map<Operation, Long> requestCounts() {
        Map<Operation, Long> copy = new EnumMap<>(Operation.class);
        counters.forEach((op, n) -> copy.put(op, n.get()));
        return copy;
    }

    /** How many faults (failures, drops) and 429s of the write-rate limit were injected since start. */
    public long faultsInjected() {
        return injected.get();
    }

    /**
     * How many writes the write-rate limit ({@link GcsEmulator#writeRateLimit(Duration)}) answered with 429
     * since the last {@link #resetCounters()}.
     */
    public long rateLimited() {
        return rateLimited.get();
    }

    /**
     * Turns the request log on or off (off by default): while on, every request is recorded as a
     * {@link LoggedRequest} (its client, operation, object, times, status, and whether the write-rate limit
     * refused it and whose write it met). A setting, not a fault: {@link #reset()} leaves it alone.
     */
    public Faults logRequests(boolean on) {
        this.logging = on;
        return this;
    }

    /** The requests logged so far, in the order their replies left (see {@link #logRequests(boolean)}). */
    public java.util.List<LoggedRequest> requestLog() {
        return java.util.List.copyOf(log);
    }

    /** Empties the request log. */
    public Faults clearRequestLog() {
        log.clear();
        return this;
    }

    /** Sets every request counter (and the rate-limit counter) to zero. */
    public Faults resetCounters() {
        rateLimited.set(0);
        counters.values().forEach(c -> c.set(0));
        successes.values().forEach(c -> c.set(0));
        return this;
    }

    // ---- used by the server ----

    /** The faults of the client whose endpoint listens on {@code port}, or null (the shared endpoint). */
    ClientFaults clientAt(int port) {
        return clientPorts.get(port);
    }

    void bindClient(int port, String name) {
        clientPorts.put(port, client(name));
    }

    boolean logging() {
        return logging;
    }

    void log(LoggedRequest r) {
        log.add(r);
    }

    void count(Operation op) {
        counters.get(op).incrementAndGet();
    }

    long nextLatencyNanos() {
        long min = latencyMinNanos;
        long max = latencyMaxNanos;
        if (max <= 0) {
            return 0;
        }
        if (max == min) {
            return min;
        }
        synchronized (this) {
            return min + (long) (random.nextDouble() * (max - min));
        }
    }

    void countAnswered(Operation op, int status) {
        if (status >= 200 && status < 300) {
            successes.get(op).incrementAndGet();
        }
    }

    Runnable takeAction(Operation op, String objectName) {
        for (PendingAction a : pendingActions) {
            if (a.operation == op && (a.objectName == null || a.objectName.equals(objectName)) && pendingActions.remove(a)) {
                return a.action;
            }
        }
        return null;
    }

    Integer takeFailure(Operation op) {
        for (PendingFailure f : pendingFailures) {
            if ((f.operation == null || f.operation == op) && pendingFailures.remove(f)) {
                injected.incrementAndGet();
                return f.status;
            }
        }
        return null;
    }

    boolean shouldDropReply(Operation op) {
        if (pendingDrops.remove(op)) {
            injected.incrementAndGet();
            return true;
        }
        double p = dropProbability;
        if (p > 0 && dropOperations.contains(op)) {
            boolean drop;
            synchronized (this) {
                drop = random.nextDouble() < p;
            }
            if (drop) {
                injected.incrementAndGet();
            }
            return drop;
        }
        return false;
    }

    void countRateLimited() {
        injected.incrementAndGet();
        rateLimited.incrementAndGet();
    }


    private record PendingFailure(Operation operation, int status) {
    }

    private record PendingAction(Operation operation, String objectName, Runnable action) {
    }
}
