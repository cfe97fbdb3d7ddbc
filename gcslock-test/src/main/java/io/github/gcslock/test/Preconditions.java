package io.github.gcslock.test;

import java.util.Map;

/**
 * The generation conditions GCS accepts on object requests, checked by the {@link ObjectStore} atomically
 * with the change. A null field is "not given".
 */
record Preconditions(Long ifGenerationMatch, Long ifGenerationNotMatch,
                     Long ifMetagenerationMatch, Long ifMetagenerationNotMatch) {

    /** The source object's conditions of a rewrite/copy ({@code ifSourceGenerationMatch}, ...). */
    static Preconditions ofSource(Map<String, String> query) {
        return new Preconditions(asLong(query, "ifSourceGenerationMatch"), asLong(query, "ifSourceGenerationNotMatch"),
                asLong(query, "ifSourceMetagenerationMatch"), asLong(query, "ifSourceMetagenerationNotMatch"));
    }

    static Preconditions from(Map<String, String> query) {
        return new Preconditions(asLong(query, "ifGenerationMatch"), asLong(query, "ifGenerationNotMatch"),
                asLong(query, "ifMetagenerationMatch"), asLong(query, "ifMetagenerationNotMatch"));
    }

    private static Long asLong(Map<String, String> query, String key) {
        String v = query.get(key);
        if (v == null) {
            return null;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new GcsError(400, "invalid", "Invalid argument for " + key + ": " + v);
        }
    }

    /** Checks against the live object ({@code null} when there is none). */
    void check(StoredObject current) {
        long gen = current == null ? 0 : current.generation();
        if (ifGenerationMatch != null && ifGenerationMatch != gen) {
            throw conditionNotMet("ifGenerationMatch");
        }
        if (ifGenerationNotMatch != null && ifGenerationNotMatch == gen) {
            throw new GcsError(304, "notModified", "Not Modified");
        }
        if (current == null) {
            if (ifMetagenerationMatch != null) {
                throw conditionNotMet("ifMetagenerationMatch");
            }
            return;
        }
        if (ifMetagenerationMatch != null && ifMetagenerationMatch != current.metageneration()) {
            throw conditionNotMet("ifMetagenerationMatch");
        }
        if (ifMetagenerationNotMatch != null && ifMetagenerationNotMatch == current.metageneration()) {
            throw new GcsError(304, "notModified", "Not Modified");
        }
    }

    private static GcsError conditionNotMet(String which) {
        return new GcsError(412, "conditionNotMet",
                "At least one of the pre-conditions you specified did not hold.", which);
    }
}
