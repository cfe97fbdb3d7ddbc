package io.github.gcslock;

import java.time.Duration;
import java.time.Instant;

/**
 * What a lock object says about its holder, as read from GCS.
 *
 * @param name           the lock name (without the prefix)
 * @param objectName     the GCS object name
 * @param owner          the holder's process identity
 * @param leaseId        the holder's acquisition id
 * @param host           the holder's host name
 * @param pid            the holder's process id
 * @param application    the holder's application name, or null
 * @param thread         the thread that acquired, or null
 * @param acquiredAt     when the holder acquired it (holder's clock), or null
 * @param updated        when the object was last written (GCS time): acquire or refresh
 * @param expires        the holder's expiry estimate (informational), or null
 * @param ttl            the TTL the holder uses
 * @param fencingToken   the object's generation
 * @param metageneration the object's metageneration
 * @param stale          whether this registry can prove the holder has not refreshed within its TTL
 * @param heldHere       whether this registry holds it
 */
public record LockInfo(String name, String objectName, String owner, String leaseId, String host, String pid,
                       String application, String thread, Instant acquiredAt, Instant updated, Instant expires,
                       Duration ttl, long fencingToken, long metageneration, boolean stale, boolean heldHere) {
}
