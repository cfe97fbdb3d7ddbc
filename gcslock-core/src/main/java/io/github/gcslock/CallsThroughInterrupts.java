package io.github.gcslock;

import com.google.cloud.storage.StorageException;

import java.util.function.Supplier;

/**
 * The store calls of one clean-up of an object of ours, sent whatever the calling thread's interrupt flag says:
 * a release (DESIGN.md rule 12) and the deletes of an object no lease will ever hold (rule 11 at hand-out's late
 * object, rule 3's create whose reply was lost). An interrupt would otherwise stop the call from being sent or break
 * the client's retry backoff, and the object would wait out its TTL with nobody left to delete it: not even close(),
 * which knows only the leases it handed out.
 * <p>
 * The flag is cleared before the first call; a call an interrupt broke (outcome unknown) is sent again with the flag
 * clear, up to {@link #RESENDS_AFTER_INTERRUPTS} times per clean-up, each send bounded by the operation timeout (rule
 * 15): a cancel and an executor's shutdownNow are two interrupts, and a 412 path's read and guarded delete are calls
 * too. Bounded whatever the interrupts. The caller gives the flag back with {@link #restoreFlag()} when done.
 */
final class CallsThroughInterrupts {

    /** How many times one clean-up sends a call again after an interrupt broke it. */
    static final int RESENDS_AFTER_INTERRUPTS = 5;

    private boolean seen;
    private int resends;

    /** Clears the calling thread's interrupt flag, remembering it for {@link #restoreFlag()}. */
    CallsThroughInterrupts() {
        seen = Thread.interrupted();
    }

    /** Sends {@code call}, again after an interrupt broke it (see the class comment); other failures are thrown. */
    <T> T send(Supplier<T> call) {
        while (true) {
            try {
                return call.get();
            } catch (StorageException broken) {
                boolean interrupted = Thread.interrupted();
                seen |= interrupted; // given back to the thread by restoreFlag()
                if (!interrupted || resends >= RESENDS_AFTER_INTERRUPTS) {
                    throw broken;
                }
                resends++; // an interrupt during the call broke it: once more, with the flag clear
            }
        }
    }

    /** Notes an interrupt the caller saw meanwhile (a wait that ignored it), to be given back too. */
    void interruptSeen(boolean interrupted) {
        seen |= interrupted;
    }

    /** Gives the thread back its interrupt flag if it was set at the start or any interrupt came meanwhile. */
    void restoreFlag() {
        if (seen || Thread.interrupted()) {
            Thread.currentThread().interrupt();
        }
    }
}
