package io.github.gcslock;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * What this process knows locally about each lock name: a permit its threads queue on, the owner of the
 * name's hold (a thread, or an invocation: {@link LockOwner}) and its reentrant hold count, and whether the outermost hold was given back for a delayed
 * release; and the leases it holds, by lease id. No GCS request is made here; the engine asks this class
 * whether a hold that was given back ends the lease, and tells it when a lease was handed out or
 * released. Names are kept only while used (rule 17): per-tenant names must not accumulate.
 */
final class LocalHolds {

    /**
     * Local state of one name: a permit that the threads of this process queue on (so a process sends
     * at most one contender's requests per name), the owner holding it (a thread or an invocation, rule 17),
     * and its reentrant hold count.
     * A {@link Semaphore} rather than a ReentrantLock because a lease may be released from another
     * thread (shutdown, deferred release). Kept in {@link LocalHolds#slots} only while used (rule 17): see
     * {@link LocalHolds#pin}.
     */
    static final class LocalSlot {
        /** Taken by the thread that asks GCS for the name; held while a lease of this process holds it. */
        final Semaphore permit = new Semaphore(1, true);
        /**
         * Threads inside an acquire of this name (looking it up, queued on the permit, asking GCS); changed
         * only in {@code slots}' compute.
         */
        private int users;
        /** {@link LockOwner#key()} of the hold: a Thread, or the LockOwner of an invocation; null when nobody owns it. */
        private volatile Object owner;
        private volatile GcsLease lease;
        /** The owner whose thread holds the permit to ask GCS; becomes {@link #owner} if a lease is handed out. */
        private volatile Object asking;
        /** Holds of the owner (guarded by the slot's monitor); 0 while a hold-at-least delay runs. */
        private int holds;
        /** The outermost hold was given back with {@code releaseAfter}: the delayed release ends the lease (rule 13). */
        private boolean releaseDeferred;

        /** Nobody is acquiring it and no lease holds it (held, or in a hold-at-least delay): it can go. */
        private boolean idle() {
            return users == 0 && lease == null;
        }
    }

    private final Map<String, LocalSlot> slots = new ConcurrentHashMap<>();
    /** Leases handed out and not yet released: refreshed, released by close(), "ours and live" to the protocol. */
    private final Map<String, GcsLease> liveByLeaseId = new ConcurrentHashMap<>();

    /**
     * The slot of {@code name}, looked up (or made) and pinned in one atomic step of the map; a pinned slot
     * is never evicted. Rule 17. The race a separate lookup would open: T1 finds slot S and is about to take
     * its permit; S's last user leaves and evicts it as idle; T2 finds no slot, makes S' and takes its permit;
     * T1 takes S's: two local owners of one name, both sending creates — and T2, on 412, could see our owner
     * with T1's lease id not yet registered and delete T1's fresh object as "leaked" — while a release looks
     * the name up and finds the other slot, so it never frees the permit or the object.
     */
    LocalSlot pin(String name) {
        return slots.compute(name, (n, existing) -> {
            LocalSlot slot = existing != null ? existing : new LocalSlot();
            slot.users++;
            return slot;
        });
    }

    /** Ends a {@link #pin}; evicts the slot if that left it idle (not held, nobody else acquiring). */
    void unpin(String name, LocalSlot slot) {
        slots.computeIfPresent(name, (n, current) -> {
            if (current == slot) {
                current.users--;
            }
            return current.idle() ? null : current;
        });
    }

    /**
     * A nested acquire by the owner that holds the name: counted locally, no GCS request. Rule 17: only the very
     * owner re-enters — for an invocation that is its {@link LockOwner}, never the thread that happens to ask (a
     * pooled thread that took an invocation's lock and went back to its pool, or the caller of a method whose
     * future is still running, would otherwise run a second body inside the first's hold).
     */
    Lease reenter(LocalSlot slot, String name, Object owner) {
        GcsLease lease = heldBy(slot, owner);
        if (lease == null) {
            return null;
        }
        if (!lease.isHealthy()) {
            throw new LockLostException(name, lease.fencingToken(), "the enclosing hold of this owner is no longer healthy: "
                    + lease.lostReason().orElse("released"));
        }
        synchronized (slot) {
            if (slot.holds < 1) {
                return null; // given back by releaseAfter meanwhile (rule 13): wait for the delayed release like anyone
            }
            slot.holds++;
        }
        return new ReentrantHold(lease);
    }

    /**
     * Whether the calling thread holds the I/O lock of the lease that holds {@code slot}'s name here (the application's
     * transport inside a renewal or a refresh of it): that lease's release waits for the lock, so the name cannot come
     * free while this thread waits for it (rule 17).
     */
    boolean holderWaitsForThisThread(LocalSlot slot) {
        GcsLease lease = slot.lease;
        return lease != null && lease.ioHeldByCurrentThread();
    }

    /**
     * Whether {@code owner} ({@link LockOwner#key()}) holds {@code slot}'s name now. The one answer to that question for
     * reentry and for {@link Acquirer}'s refusal of an invocation's wait for its own thread's hold (rule 17).
     */
    boolean ownedBy(LocalSlot slot, Object owner) {
        return heldBy(slot, owner) != null;
    }

    /**
     * Rule 17: the lease {@code owner} holds in {@code slot}, or null. Not held: a slot of another owner; a hold all given
     * back by releaseAfter (rule 13: its delayed release ends by itself); a lease whose release has begun, lost first or
     * not (given back on another thread: a future's completion, an onLost listener, a release handed off, a failed
     * hand-out; its DELETE still in flight, so the slot still names this owner, but the owner holds nothing now and waits
     * for that release like anyone). Read as held, such a release made the owner's next call fail with LockLostException
     * ("no longer healthy"), and an invocation on the owner's thread was refused as a wait for that thread's own hold. A
     * lost lease not yet given back is still held: its holder has not let it go, and a nested call must hear that it
     * was lost.
     */
    private static GcsLease heldBy(LocalSlot slot, Object owner) {
        if (slot.owner != owner) {
            return null;
        }
        GcsLease lease = slot.lease;
        if (lease == null || lease.isReleasing()) {
            return null;
        }
        synchronized (slot) {
            return slot.holds < 1 ? null : lease;
        }
    }

    /** The calling thread took {@code slot}'s permit to ask GCS for {@code owner} ({@link LockOwner#key()}). */
    void asking(LocalSlot slot, Object owner) {
        slot.asking = owner;
    }

    /** {@code lease} was handed out to the owner that asked (its thread holds {@code slot}'s permit): its one hold. */
    void own(LocalSlot slot, GcsLease lease) {
        slot.owner = slot.asking;
        slot.lease = lease;
        synchronized (slot) {
            slot.holds = 1;
            slot.releaseDeferred = false;
        }
        liveByLeaseId.put(lease.leaseId(), lease);
    }

    /** Whether a lease of this process with {@code leaseId} is held (handed out, not yet released). */
    boolean isLive(String leaseId) {
        return liveByLeaseId.containsKey(leaseId);
    }

    /** The leases held now (releasing ones included). */
    List<GcsLease> live() {
        return new ArrayList<>(liveByLeaseId.values());
    }

    /** The leases held and not releasing (a snapshot, for {@code heldLeases()}). */
    Collection<Lease> heldNotReleasing() {
        // A lease leaves as soon as its release begins: it is no longer healthy then, and health checks
        // must not count a normal release (whose DELETE may take a second after a 429) as a lost lock.
        List<Lease> held = new ArrayList<>();
        for (GcsLease lease : liveByLeaseId.values()) {
            if (!lease.isReleasing()) {
                held.add(lease);
            }
        }
        return List.copyOf(held);
    }

    /**
     * Gives back one hold of {@code lease}; true if that was the last one and the lease must now be
     * released (false while nested holds remain, during a hold-at-least delay, or if it was released already).
     */
    boolean giveBackHold(GcsLease lease) {
        LocalSlot slot = slots.get(lease.name());
        if (slot == null || slot.lease != lease) {
            return false; // already released
        }
        synchronized (slot) {
            if (slot.holds > 1) {
                slot.holds--;
                return false;
            }
            slot.holds = 0;
            if (slot.releaseDeferred) {
                slot.owner = null; // rule 13: nobody owns it now; the delayed release ends the lease
                return false;
            }
        }
        return true;
    }

    /**
     * Gives back the outermost hold of {@code lease} now while the name stays taken (permit and lease kept)
     * until a delayed release (rule 13); returns its slot for {@link #deferredReleaseDue}, or null if the
     * lease was released already (or its outermost hold given back).
     */
    LocalSlot deferRelease(GcsLease lease) {
        LocalSlot slot = slots.get(lease.name());
        if (slot == null || slot.lease != lease || !lease.claimOuterHold()) {
            return null; // already released
        }
        // Rule 13. If the releasing owner kept counting as the owner, its next acquire (the next tick of a
        // single-thread scheduler) would be a reentrant hold and run the job again inside the hold. So the
        // outer hold is given back now and the name stays taken (permit and lease kept) until the delay ends.
        synchronized (slot) {
            slot.holds--;
            slot.releaseDeferred = true;
            if (slot.holds == 0) {
                slot.owner = null;
            }
        }
        return slot;
    }

    /**
     * The end of a hold-at-least delay: true if the lease must now be released — false if it was released
     * meanwhile (close()), or a nested hold of its owner is still open (giving that back releases it).
     */
    boolean deferredReleaseDue(LocalSlot slot, GcsLease lease) {
        synchronized (slot) {
            if (slot.lease != lease) {
                return false; // released meanwhile (close())
            }
            slot.releaseDeferred = false;
            return slot.holds <= 0; // else the owner is still inside a nested hold
        }
    }

    /** {@code lease} was released: frees its name's permit and forgets the name if nobody else uses it. */
    void released(GcsLease lease) {
        liveByLeaseId.remove(lease.leaseId());
        LocalSlot slot = slots.get(lease.name());
        if (slot != null && slot.lease == lease) {
            slot.lease = null;
            slot.owner = null;
            slot.permit.release();
            // Rule 17: per-tenant names must not accumulate. A waiter queued on the permit pinned the
            // slot, so this never evicts a slot someone is about to own.
            slots.computeIfPresent(lease.name(), (n, current) -> current.idle() ? null : current);
        }
    }

    /**
     * Permits {@link #openAll} adds to each slot: more than the threads that can ever queue on one. A permit given back
     * afterwards adds one more; no slot comes near the Semaphore's limit.
     */
    private static final int OPENED = 1 << 20;

    /**
     * close() (rule 14): opens the permit of every name, so that a thread queued on one behind another call of this
     * process takes it at once, finds the registry closed and fails, whatever the permit's holder is doing — a listener
     * of its notAcquired, tookOver or request events blocking on its thread (rule 20 lets that hold up its own call
     * only). The permits are exclusive no more; nothing is handed out after close() ({@link LeaseIssuer#own} checks
     * under its lock), and a thread that takes one checks for close() before it sends a request. Every slot a waiter
     * queues on is here: it was pinned before the waiter's last check for close() (which found it open), and a pinned
     * slot is never evicted.
     */
    void openAll() {
        for (LocalSlot slot : slots.values()) {
            slot.permit.release(OPENED);
        }
    }

    /** How many names have local state now (for tests: idle names must not accumulate). */
    int size() {
        return slots.size();
    }
}
