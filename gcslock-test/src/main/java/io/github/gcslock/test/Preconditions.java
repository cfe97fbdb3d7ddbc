package io.github.gcslock.test;

/**
 * The generation conditions GCS accepts on object requests, checked by the {@link ObjectStore} atomically
 * with the change. A null field is "not given".
 */
record Preconditions(Long ifGenerationMatch, Long ifGenerationNotMatch,
                     Long ifMetagenerationMatch, Long ifMetagenerationNotMatch) {

    /** The source object's conditions of a rewrite/copy ({@code ifSourceGenerationMatch}, ...). */
    static Preconditions ofSource(ApiRequest req) {
        return new Preconditions(req.longParameter("ifSourceGenerationMatch"), req.longParameter("ifSourceGenerationNotMatch"),
                req.longParameter("ifSourceMetagenerationMatch"), req.longParameter("ifSourceMetagenerationNotMatch"));
    }

    /** The conditions of the request's object ({@code ifGenerationMatch}, ...). */
    static Preconditions from(ApiRequest req) {
        return new Preconditions(req.longParameter("ifGenerationMatch"), req.longParameter("ifGenerationNotMatch"),
                req.longParameter("ifMetagenerationMatch"), req.longParameter("ifMetagenerationNotMatch"));
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
