package io.github.gcslock.test;

import com.sun.net.httpserver.Headers;

import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The query parameters the emulator honours, per operation. Anything else answers 501 with the
 * parameter's name: a parameter that was silently ignored would make the emulator answer something
 * GCS would not (a listing without its filter, an upload without its encryption key), and a test
 * would pass that fails in production.
 *
 * <p>Accepted without effect because the answer is the same: {@code prettyPrint}, {@code quotaUser},
 * {@code userProject} (no billing here), {@code projection} ({@code full} and {@code noAcl} differ only
 * in ACLs, which are not emulated), {@code fields} (the reply has every field, a superset of what was
 * asked; the client reads what it needs), {@code alt=json}, {@code maxBytesRewrittenPerCall} (a rewrite
 * finishes in one call, which GCS may also do), and the defaults {@code softDeleted=false},
 * {@code includeFoldersAsPrefixes=false}, {@code versions=false}.
 */
final class SupportedParameters {

    private SupportedParameters() {
    }

    private static final Set<String> COMMON = Set.of("prettyPrint", "quotaUser", "userProject", "projection", "fields", "alt");
    private static final Set<String> PRECONDITIONS = Set.of("ifGenerationMatch", "ifGenerationNotMatch",
            "ifMetagenerationMatch", "ifMetagenerationNotMatch");
    /** Boolean parameters whose default ({@code false}) is what the emulator does. */
    private static final Set<String> ONLY_FALSE = Set.of("softDeleted", "includeFoldersAsPrefixes");

    private static final Map<Operation, Set<String>> HONOURED = new EnumMap<>(Operation.class);

    static {
        HONOURED.put(Operation.INSERT, union(PRECONDITIONS, Set.of("uploadType", "name")));
        HONOURED.put(Operation.UPLOAD, Set.of("uploadType", "upload_id"));
        HONOURED.put(Operation.GET, union(PRECONDITIONS, Set.of("generation", "softDeleted")));
        HONOURED.put(Operation.PATCH, union(PRECONDITIONS, Set.of("generation")));
        HONOURED.put(Operation.UPDATE, union(PRECONDITIONS, Set.of("generation")));
        HONOURED.put(Operation.DELETE, union(PRECONDITIONS, Set.of("generation")));
        HONOURED.put(Operation.COMPOSE, PRECONDITIONS);
        HONOURED.put(Operation.REWRITE, union(PRECONDITIONS, Set.of("ifSourceGenerationMatch", "ifSourceGenerationNotMatch",
                "ifSourceMetagenerationMatch", "ifSourceMetagenerationNotMatch", "sourceGeneration", "rewriteToken",
                "maxBytesRewrittenPerCall")));
        HONOURED.put(Operation.LIST, Set.of("prefix", "delimiter", "includeTrailingDelimiter", "startOffset",
                "endOffset", "matchGlob", "maxResults", "pageToken", "versions", "softDeleted", "includeFoldersAsPrefixes"));
        HONOURED.put(Operation.BUCKET_GET, Set.of());
        HONOURED.put(Operation.BUCKET_INSERT, Set.of("project"));
        // One page holds every bucket: maxResults and pageToken change nothing; prefix is honoured.
        HONOURED.put(Operation.BUCKET_LIST, Set.of("project", "prefix", "maxResults", "pageToken"));
        HONOURED.put(Operation.BUCKET_DELETE, Set.of());
    }

    /** Throws a 501 naming the first parameter or header of the request that the emulator would not honour. */
    static void check(Operation op, Map<String, String> query, Headers headers) {
        Set<String> honoured = HONOURED.getOrDefault(op, Set.of());
        for (Map.Entry<String, String> e : query.entrySet()) {
            String key = e.getKey();
            String value = e.getValue();
            if (!COMMON.contains(key) && !honoured.contains(key)) {
                throw notImplemented("the query parameter '" + key + "' on " + describe(op));
            }
            if (ONLY_FALSE.contains(key) && !value.equals("false")) {
                throw notImplemented(key + "=" + value + " on " + describe(op));
            }
            switch (key) {
                case "projection" -> {
                    if (!value.equals("full") && !value.equals("noAcl")) {
                        throw new GcsError(400, "invalid", "Invalid value for projection: " + value);
                    }
                }
                case "alt" -> {
                    boolean media = value.equals("media") && op == Operation.GET;
                    if (!value.equals("json") && !media) {
                        throw notImplemented("alt=" + value + " on " + describe(op));
                    }
                }
                case "uploadType" -> {
                    List<String> types = op == Operation.UPLOAD ? List.of("resumable") : List.of("media", "multipart", "resumable");
                    if (!types.contains(value)) {
                        throw notImplemented("uploadType=" + value);
                    }
                }
                case "versions" -> {
                    if (!value.equals("true") && !value.equals("false")) {
                        throw new GcsError(400, "invalid", "Invalid value for versions: " + value);
                    }
                }
                default -> {
                }
            }
        }
        for (String header : headers.keySet()) {
            if (header.toLowerCase(Locale.ROOT).startsWith("x-goog-encryption-")
                    || header.toLowerCase(Locale.ROOT).startsWith("x-goog-copy-source-encryption-")) {
                throw notImplemented("customer-supplied encryption keys (header " + header + ")");
            }
        }
    }

    static GcsError notImplemented(String what) {
        return new GcsError(501, "notImplemented", "The gcslock emulator does not implement " + what + ".");
    }

    private static String describe(Operation op) {
        return switch (op) {
            case INSERT -> "objects.insert";
            case UPLOAD -> "a resumable upload session";
            case GET -> "objects.get";
            case PATCH -> "objects.patch";
            case UPDATE -> "objects.update";
            case DELETE -> "objects.delete";
            case COMPOSE -> "objects.compose";
            case REWRITE -> "objects.rewrite";
            case LIST -> "objects.list";
            case BUCKET_GET -> "buckets.get";
            case BUCKET_INSERT -> "buckets.insert";
            case BUCKET_LIST -> "buckets.list";
            case BUCKET_DELETE -> "buckets.delete";
            case OTHER -> "this request";
        };
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        HashSet<String> s = new HashSet<>(a);
        s.addAll(b);
        return Set.copyOf(s);
    }
}
