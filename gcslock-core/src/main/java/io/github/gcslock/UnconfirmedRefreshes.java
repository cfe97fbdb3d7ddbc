package io.github.gcslock;

import com.google.cloud.storage.Blob;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The refreshes of one lease sent since its last confirmed one whose outcome is unknown (a lost reply, a
 * reply after the operation timeout): refresh id → the metageneration it was guarded by and when it was
 * sent. Any of them may have committed, so a later 412 that shows one of these ids is our own write, not
 * someone else's (rule 8). Touched only under the lease's {@code io} lock.
 */
final class UnconfirmedRefreshes {

    /** A refresh whose outcome is not known yet. */
    record Refresh(long guardMetageneration, long sentNanos) {
    }

    private final Map<String, Refresh> byId = new LinkedHashMap<>();

    /** Refresh {@code refreshId}, guarded by {@code guardMetageneration}, goes out at {@code sentNanos}. */
    void sent(String refreshId, long guardMetageneration, long sentNanos) {
        byId.put(refreshId, new Refresh(guardMetageneration, sentNanos));
    }

    /**
     * The unconfirmed refresh of ours that wrote {@code current}, or null if none of ours did: it carries
     * that refresh's id, exactly one write past the metageneration the refresh was guarded by (someone
     * else's PATCH would not be).
     */
    Refresh thatWrote(Blob current) {
        Refresh r = byId.get(LockObject.meta(current, LockObject.REFRESH));
        return r != null && current.getMetageneration() == r.guardMetageneration() + 1 ? r : null;
    }

    /** A refresh was confirmed: the object moved past every earlier refresh of ours. */
    void clear() {
        byId.clear();
    }
}
