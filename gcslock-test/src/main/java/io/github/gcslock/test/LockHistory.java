package io.github.gcslock.test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records what lock holders did, on the monotonic clock, and checks the history for violations:
 * <ul>
 * <li>two leases of one name healthy at the same moment;</li>
 * <li>a guarded resource accepting a write whose fencing token is lower than one it already saw;</li>
 * <li>a lease that was acquired but never released, lost, or reported still held;</li>
 * <li>a lost-lease callback that fired after another holder had acquired the name while the lease's
 *     holder was still holding it (users stop work and alert on it: it must come while nobody else can
 *     hold the lock yet);</li>
 * <li>a lease reported healthy after its registry's {@code close()} had returned;</li>
 * <li>an acquisition, by the holder that released with "hold at least", of that name before the
 *     delay ended;</li>
 * <li>lock objects left over once every registry has closed (reported with {@link #leftover}).</li>
 * </ul>
 * A lease's healthy window is recorded conservatively: it starts when {@code acquire} returned and
 * ends at the start of the last {@code isHealthy()} check that answered true, so a reported overlap
 * is a real one. Thread-safe; usable from users' own tests.
 */
public final class LockHistory {

    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Window> windows = new ConcurrentHashMap<>();
    private final Map<String, Long> highestToken = new ConcurrentHashMap<>();
    private final List<String> fencingViolations = new ArrayList<>();
    private final AtomicLong fencedWrites = new AtomicLong();
    private final AtomicLong rejectedWrites = new AtomicLong();
    private final Map<String, Long> closedAt = new ConcurrentHashMap<>();
    private final List<String> runViolations = Collections.synchronizedList(new ArrayList<>());

    private static final class Window {
        final long id;
        final String name;
        final String holder;
        final long token;
        final long start;
        volatile long lastHealthy;
        volatile String outcome;
        /** When the lost-lease callback fired ({@code 0}: it did not). */
        volatile long lostCallbackAt;
        /** Until when the holder released it with "hold at least" ({@code 0}: a plain release). */
        volatile long heldAtLeastUntil;
        volatile boolean flaggedHealthyAfterClose;
        /** Whether any isHealthy() check of it answered true: a lease never seen healthy never wrote with its token. */
        volatile boolean everHealthy;
        /** When {@link #ended} was called ({@code 0}: not yet): the holder had stopped using it. */
        volatile long endedAt;

        Window(long id, String name, String holder, long token, long start) {
            this.id = id;
            this.name = name;
            this.holder = holder;
            this.token = token;
            this.start = start;
            this.lastHealthy = start;
        }

        @Override
        public String toString() {
            return "lease#" + id + "[" + name + " by " + holder + ", token " + token + ", healthy "
                    + start + ".." + lastHealthy + " ns, " + (outcome == null ? "open" : outcome) + "]";
        }
    }

    /** Call right after {@code acquire} returned; returns the id to report the rest of this lease with. */
    public long acquired(String name, String holder, long fencingToken) {
        long id = ids.incrementAndGet();
        windows.put(id, new Window(id, name, holder, fencingToken, System.nanoTime()));
        return id;
    }

    /** Call with the {@link System#nanoTime()} taken just before an {@code isHealthy()} call that returned true. */
    public void healthy(long id, long checkStartedNanos) {
        Window w = windows.get(id);
        if (checkStartedNanos > w.lastHealthy) {
            w.lastHealthy = checkStartedNanos;
        }
        w.everHealthy = true;
        Long closed = closedAt.get(w.holder);
        if (closed != null && checkStartedNanos - closed > 0 && !w.flaggedHealthyAfterClose) {
            w.flaggedHealthyAfterClose = true;
            // close() releases every lease it knows of and a closed registry hands out none: a lease that is
            // still healthy after close() returned was handed out by a closed registry (or missed by close).
            runViolations.add("healthy after its registry closed: " + w + " (closed at " + closed + " ns)");
        }
    }

    /**
     * Call from the lease's lost-lease callback ({@code onLost}); the time is taken here. The callback
     * must fire before any other holder acquires the name.
     */
    public void lostCallback(long id) {
        Window w = windows.get(id);
        if (w.lostCallbackAt == 0) {
            w.lostCallbackAt = System.nanoTime();
        }
    }

    /** Call right after {@code close()} of the registry of {@code holder} returned. */
    public void registryClosed(String holder) {
        closedAt.putIfAbsent(holder, System.nanoTime());
    }

    /**
     * Call when the lease was handed to a "hold at least" release ({@code releaseAfter}) whose delay ends at
     * {@code untilNanos} ({@link System#nanoTime()}): its holder must not acquire the name again before then
     * (unless the lease was lost meanwhile). Call {@link #ended} as well.
     */
    public void heldAtLeast(long id, long untilNanos) {
        windows.get(id).heldAtLeastUntil = untilNanos;
    }

    /** Reports a lock object found once every registry had closed and a TTL had passed: a leak. */
    public void leftover(String objectName, String details) {
        runViolations.add("leaked object: " + objectName + " " + details);
    }

    /** Call when the lease ended: {@code "released"}, {@code "lost"}, {@code "held"} (still held at the end). */
    public void ended(long id, String outcome) {
        Window w = windows.get(id);
        w.endedAt = System.nanoTime();
        w.outcome = outcome;
    }

    /**
     * A write to a resource guarded by fencing tokens: accepted only if its token is not lower than
     * the highest seen for {@code name}. Returns whether it was accepted.
     */
    public synchronized boolean fencedWrite(String name, long token) {
        fencedWrites.incrementAndGet();
        long highest = highestToken.getOrDefault(name, Long.MIN_VALUE);
        if (token < highest) {
            rejectedWrites.incrementAndGet();
            return false;
        }
        highestToken.put(name, token);
        return true;
    }

    /** Records a write that a resource accepted although its token was lower (for resources checked elsewhere). */
    public synchronized void fencingRegression(String name, long token, long highest) {
        fencingViolations.add("write to " + name + " with token " + token + " after token " + highest);
    }

    /** How many leases were recorded with {@link #acquired}. */
    public long acquisitions() {
        return windows.size();
    }

    /** How many leases ended as {@code "lost"} ({@link #ended}). */
    public long lostLeases() {
        return windows.values().stream().filter(w -> "lost".equals(w.outcome)).count();
    }

    /** How many writes {@link #fencedWrite} refused because a higher token had been seen. */
    public long rejectedWrites() {
        return rejectedWrites.get();
    }

    /** Every violation found, each with the history excerpt that shows it; empty when the history is correct. */
    public List<String> violations() {
        List<String> out = new ArrayList<>(fencingViolations);
        synchronized (runViolations) {
            out.addAll(runViolations);
        }
        Map<String, List<Window>> byName = new ConcurrentHashMap<>();
        windows.values().forEach(w -> byName.computeIfAbsent(w.name, k -> new ArrayList<>()).add(w));
        for (List<Window> ws : byName.values()) {
            ws.sort(Comparator.comparingLong(w -> w.start));
            // A lease whose first isHealthy() already answered false (handed out past its deadline, e.g. after
            // a pause between the reply and the hand-out) never acted as a holder: it cannot overlap, and its
            // token was never used.
            List<Window> held = ws.stream().filter(w -> w.everHealthy).toList();
            for (int i = 0; i < held.size(); i++) {
                for (int j = i + 1; j < held.size() && held.get(j).start <= held.get(i).lastHealthy; j++) {
                    out.add("overlap: " + held.get(i) + " and " + held.get(j));
                }
            }
            // Fencing tokens must grow with acquisition order.
            for (int i = 1; i < held.size(); i++) {
                if (held.get(i).token <= held.get(i - 1).token && held.get(i).start > held.get(i - 1).lastHealthy) {
                    out.add("fencing token did not grow: " + held.get(i - 1) + " then " + held.get(i));
                }
            }
            for (Window w : ws) {
                for (Window later : ws) {
                    if (later.start - w.start <= 0) {
                        continue;
                    }
                    // Late only if the holder was still holding (not yet ended) when the other one acquired: a
                    // holder that had seen the loss itself and stopped needs no callback any more.
                    if (w.lostCallbackAt != 0 && later.start - w.lostCallbackAt < 0
                            && (w.endedAt == 0 || later.start - w.endedAt < 0)) {
                        out.add("late lost callback: " + w + " was told it lost the lock at " + w.lostCallbackAt
                                + " ns, after " + later + " had acquired it");
                    }
                    if (w.heldAtLeastUntil != 0 && later.holder.equals(w.holder) && later.start - w.heldAtLeastUntil < 0
                            && (w.lostCallbackAt == 0 || later.start - w.lostCallbackAt < 0)) {
                        out.add("re-acquired during hold-at-least: " + w + " was held at least until " + w.heldAtLeastUntil
                                + " ns, but its holder acquired it again as " + later);
                    }
                }
            }
        }
        for (Window w : windows.values()) {
            if (w.outcome == null) {
                out.add("never ended (neither released, lost nor reported held): " + w);
            }
        }
        return out;
    }

    /** The number of overlapping pairs among {@link #violations()}. */
    public long overlaps() {
        return violations().stream().filter(v -> v.startsWith("overlap")).count();
    }

    /** The number of lost-lease callbacks that fired after another holder had acquired the name. */
    public long lateLostCallbacks() {
        return violations().stream().filter(v -> v.startsWith("late lost callback")).count();
    }

    /** The number of lock objects reported with {@link #leftover}. */
    public long leakedObjects() {
        return violations().stream().filter(v -> v.startsWith("leaked object")).count();
    }

    /** The number of fencing violations among {@link #violations()}. */
    public long fencingRegressions() {
        return violations().stream().filter(v -> v.startsWith("fencing") || v.startsWith("write")).count();
    }
}
