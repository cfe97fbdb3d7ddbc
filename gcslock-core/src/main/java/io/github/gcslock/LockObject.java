package io.github.gcslock;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The layout of a lock object: one empty object per lock name, {@code Cache-Control: no-store}
 * (a cached read could show a holder that is gone), and the holder's facts as custom metadata.
 */
final class LockObject {

    static final String OWNER = "gcslock-owner";
    static final String LEASE = "gcslock-lease";
    static final String TTL = "gcslock-ttl";
    static final String EXPIRES = "gcslock-expires";
    static final String HOST = "gcslock-host";
    static final String PID = "gcslock-pid";
    static final String APP = "gcslock-app";
    static final String THREAD = "gcslock-thread";
    static final String ACQUIRED_AT = "gcslock-acquired-at";
    /** Random id of the last refresh, so a refresh whose reply was lost can be recognised as ours. */
    static final String REFRESH = "gcslock-refresh";

    static final byte[] EMPTY = new byte[0];

    /**
     * The longest TTL a lock object may carry (DESIGN.md rule 19): 100 years. Longer TTLs are refused when set, and
     * a longer one read from an object counts as this, so that no reader's time arithmetic (TTL in nanoseconds,
     * twice the TTL as a drift window) overflows whatever another process wrote.
     */
    static final Duration MAX_TTL = Duration.ofDays(36_500);

    private LockObject() {
    }

    static BlobInfo newLockObject(String bucket, String objectName, ProcessIdentity me, String leaseId,
                                  Duration ttl, Instant acquiredAt, Instant expires) {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put(OWNER, me.owner());
        meta.put(LEASE, leaseId);
        // Stored so that every reader judges staleness with the TTL the holder refreshes for.
        meta.put(TTL, Long.toString(ttl.toMillis()));
        meta.put(EXPIRES, expires.toString());
        meta.put(HOST, me.host());
        meta.put(PID, me.pid());
        if (me.application() != null) {
            meta.put(APP, me.application());
        }
        meta.put(THREAD, Thread.currentThread().getName());
        meta.put(ACQUIRED_AT, acquiredAt.toString());
        return BlobInfo.newBuilder(BlobId.of(bucket, objectName))
                .setCacheControl("no-store")
                .setContentType("application/octet-stream")
                .setMetadata(meta)
                .build();
    }

    static String owner(Blob b) {
        return meta(b, OWNER);
    }

    static String leaseId(Blob b) {
        return meta(b, LEASE);
    }

    static Instant updated(Blob b) {
        return b.getUpdateTimeOffsetDateTime() == null ? null : b.getUpdateTimeOffsetDateTime().toInstant();
    }

    /** The holder's TTL; {@code fallback} when the object was not written by gcslock or is damaged. */
    static Duration ttl(Blob b, Duration fallback) {
        String v = meta(b, TTL);
        if (v == null) {
            return fallback;
        }
        try {
            long ms = Long.parseLong(v);
            return ms <= 0 ? fallback : ms >= MAX_TTL.toMillis() ? MAX_TTL : Duration.ofMillis(ms);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    static String meta(Blob b, String key) {
        Map<String, String> m = b.getMetadata();
        return m == null ? null : m.get(key);
    }

    static Instant instant(Blob b, String key) {
        String v = meta(b, key);
        if (v == null) {
            return null;
        }
        try {
            return Instant.parse(v);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /**
     * Checks a lock name against GCS's object-name rules and the characters that break tools
     * ({@code #} and {@code ?} in URLs, {@code [ ] *} in gsutil wildcards).
     */
    static void validateName(String prefix, String name) {
        if (name == null || name.isEmpty()) {
            throw new GcsLockConfigurationException("name", "lock name must not be empty");
        }
        int i = forbiddenCharAt(name);
        if (i >= 0) {
            char c = name.charAt(i);
            if (Character.isISOControl(c)) {
                throw new GcsLockConfigurationException("name", "lock name '" + printable(name)
                        + "' contains a control character at index " + i);
            }
            throw new GcsLockConfigurationException("name", "lock name '" + name + "' contains '" + c
                    + "'; the characters # [ ] * ? are not allowed");
        }
        int lone = unpairedSurrogateAt(name);
        if (lone >= 0) {
            // Such a name cannot be encoded as UTF-8: the client substitutes a replacement, and the create and
            // later requests need not name the same object (acquired, then lost at the first refresh, leaked).
            throw new GcsLockConfigurationException("name", "lock name '" + printable(abbreviated(name))
                    + "' is not valid UTF-16: unpaired surrogate at index " + lone);
        }
        int bytes = utf8Length(prefix + name);
        if (bytes > MAX_OBJECT_NAME_BYTES) {
            throw new GcsLockConfigurationException("name", "lock name '" + abbreviated(name)
                    + "' is too long: with the prefix '" + abbreviated(prefix) + "' it is " + bytes
                    + " bytes of UTF-8, GCS allows " + MAX_OBJECT_NAME_BYTES);
        }
        String full = prefix + name;
        if (full.equals(".") || full.equals("..") || full.startsWith(".well-known/acme-challenge/")) {
            throw new GcsLockConfigurationException("name", "lock object name '" + full + "' is reserved by GCS");
        }
    }

    /** GCS's limit on an object name, in bytes of UTF-8. */
    static final int MAX_OBJECT_NAME_BYTES = 1024;

    static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /** Index of the first surrogate that is not half of a pair (not valid UTF-16, not encodable as UTF-8), or -1. */
    static int unpairedSurrogateAt(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++; // a pair
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    /** The first 40 characters and "...", for messages about very long names. */
    static String abbreviated(String s) {
        return s.length() <= 40 ? s : s.substring(0, Character.isHighSurrogate(s.charAt(39)) ? 39 : 40) + "...";
    }

    /**
     * Index of the first character not allowed in lock names or the prefix (control characters, and
     * {@code # [ ] *  ?} which break URLs and gsutil wildcards), or -1.
     */
    static int forbiddenCharAt(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || "#[]*?".indexOf(c) >= 0) {
                return i;
            }
        }
        return -1;
    }

    static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            sb.append(Character.isISOControl(c) || Character.isSurrogate(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return sb.toString();
    }
}
