package io.github.gcslock.test;

import java.time.Instant;
import java.util.Map;

/**
 * What the store noted about the request being served on this thread, for {@link LoggedRequest}: the client it
 * came from (set by the fault pipeline), the object it touched, and a write-rate refusal.
 */
final class RequestNotes {

    static final ThreadLocal<RequestNotes> CURRENT = new ThreadLocal<>();

    String client;
    String object;
    Map<String, String> metadata = Map.of();
    Instant updated;
    boolean writeRateLimited;
    String previousWriter;
    long previousWriteNanos;

    static RequestNotes current() {
        return CURRENT.get();
    }

    /** Notes {@code o} as the object the request read, made or changed (or deleted). */
    static void object(StoredObject o) {
        RequestNotes n = CURRENT.get();
        if (n != null && o != null) {
            n.object = o.name();
            n.metadata = o.metadata() == null || o.metadata().custom() == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.HashMap<>(o.metadata().custom()));
            n.updated = o.updated();
        }
    }

    static void name(String name) {
        RequestNotes n = CURRENT.get();
        if (n != null && n.object == null) {
            n.object = name;
        }
    }

    static String client() {
        RequestNotes n = CURRENT.get();
        return n == null ? null : n.client;
    }
}
