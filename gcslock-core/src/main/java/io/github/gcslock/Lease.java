package io.github.gcslock;

import java.time.Instant;
import java.util.Optional;

/**
 * One acquisition of a lock. While healthy, no other lease of the same lock is healthy; the registry
 * refreshes it in the background until {@link #release()}.
 *
 * <p>A lease can be lost (deleted by an administrator, taken over after a long pause, refreshes
 * failing): {@link #isHealthy()} turns false, {@link #checkHealthy()} throws and the listeners given
 * to {@link #onLost} fire. A lease knows it is lost before anyone else may take the lock over (the
 * deadline rule), but a process can pause between the check and the write it guards; protect writes
 * with the {@link #fencingToken()} where the resource allows it.
 */
public interface Lease extends AutoCloseable {

    /** The lock's name, as given to the registry. */
    String name();

    /**
     * The fencing token: the lock object's GCS generation. Guaranteed: unique per object version (GCS
     * documents this), so two leases of one name never share a token, and it does not change while the
     * lease lives. Not guaranteed: that a later lease's token is larger — GCS does not document that
     * generations increase, though in practice they are increasing microsecond timestamps. The registry
     * logs a WARN and tells {@link LockEventListener#fencingTokenRegression} when it sees a token that is
     * not greater than one it saw before for the name.
     */
    long fencingToken();

    /** The random id of this acquisition, stored in the lock object. */
    String leaseId();

    /** When this lease was acquired (this process's clock). */
    Instant acquiredAt();

    /** When the lock object was last written by this lease (acquire or refresh), in GCS time. */
    Instant lastRefreshAt();

    /** When this lease would expire if it were not refreshed again, in estimated GCS time. */
    Instant expiresAt();

    /** True until the lease is released or lost. Makes no GCS request. */
    boolean isHealthy();

    /**
     * Throws if the lease is no longer healthy; call between steps of long work.
     *
     * @throws LockLostException if lost or released
     */
    void checkHealthy() throws LockLostException;

    /** Why the lease was lost, if it was. */
    Optional<String> lostReason();

    /** Registers a listener told once when this lease is lost; told at once if it already is. */
    Lease onLost(LeaseLostListener listener);

    /**
     * Stops refreshing and deletes the lock object (only if it is still this lease's). Idempotent.
     * A reentrant hold only gives back its hold; the lock is released when the outermost hold is.
     * If another thread is releasing this lease at the same time (the registry's {@code close()}, a loss listener, an
     * earlier {@code release()} handed to another thread, a hold-at-least release that came due), this returns when
     * that release has ended (bounded by eight operation timeouts and four write windows: that release's worst case, a
     * renewal in flight and then a DELETE meeting 429 and 412), so the object is gone when it returns unless GCS refused
     * or did not answer the delete (then it stays until its TTL). It never waits for a listener.
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
