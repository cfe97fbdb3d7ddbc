package io.github.gcslock.test;

import com.sun.net.httpserver.HttpExchange;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Routing: from an HTTP method and path of the JSON API to the {@link Operation} and what it acts on.
 * Whatever is not emulated is routed to {@link Operation#OTHER} (answered with 501), never to a
 * neighbouring operation.
 */
final class RequestRouter {

    /** Object sub-resources and actions (a literal '/' after the object name): not emulated, so 501. */
    private static final Set<String> OBJECT_SUBRESOURCES = Set.of(
            "acl", "compose", "copyTo", "rewriteTo", "restore", "moveTo", "bulkRestore");

    private RequestRouter() {
    }

    /** Routes one exchange; throws {@link GcsError} when its query string cannot be read. */
    static ApiRequest route(HttpExchange ex) {
        String method = ex.getRequestMethod().toUpperCase(Locale.ROOT);
        String override = ex.getRequestHeaders().getFirst("X-HTTP-Method-Override");
        if (override != null && method.equals("POST")) {
            method = override.toUpperCase(Locale.ROOT);
        }
        Map<String, String> query = PathCodec.query(ex.getRequestURI().getRawQuery());
        List<String> seg = Arrays.asList(ex.getRequestURI().getRawPath().split("/"));
        // seg[0] is "" (leading slash)
        if (seg.size() == 7 && seg.get(1).equals("upload") && seg.get(2).equals("storage") && seg.get(3).equals("v1")
                && seg.get(4).equals("b") && seg.get(6).equals("o")) {
            return upload(method, PathCodec.decode(seg.get(5)), query, ex);
        }
        int base = 0;
        if (seg.size() >= 4 && seg.get(1).equals("download") && seg.get(2).equals("storage")) {
            base = 1;
        }
        if (seg.size() < 4 + base || !seg.get(1 + base).equals("storage") || !seg.get(2 + base).equals("v1")
                || !seg.get(3 + base).equals("b")) {
            // Batch requests, projects (HMAC keys, service account), the XML API, ...
            return new ApiRequest(Operation.OTHER, method, null, null, query, ex);
        }
        List<String> rest = seg.subList(4 + base, seg.size());
        if (rest.isEmpty()) {
            Operation op = switch (method) {
                case "POST" -> Operation.BUCKET_INSERT;
                case "GET" -> Operation.BUCKET_LIST;
                default -> Operation.OTHER;
            };
            return new ApiRequest(op, method, null, null, query, ex);
        }
        String bucket = PathCodec.decode(rest.get(0));
        if (rest.size() == 1) {
            Operation op = switch (method) {
                case "GET" -> Operation.BUCKET_GET;
                case "DELETE" -> Operation.BUCKET_DELETE;
                default -> Operation.OTHER;
            };
            return new ApiRequest(op, method, bucket, null, query, ex);
        }
        if (!rest.get(1).equals("o")) {
            return new ApiRequest(Operation.OTHER, method, bucket, null, query, ex);
        }
        if (rest.size() == 2) {
            return new ApiRequest(method.equals("GET") ? Operation.LIST : Operation.OTHER, method, bucket, null, query, ex);
        }
        return object(method, bucket, rest, query, ex);
    }

    /** {@code /upload/storage/v1/b/BUCKET/o}: an upload, or a request to a resumable upload session. */
    private static ApiRequest upload(String method, String bucket, Map<String, String> query, HttpExchange ex) {
        if (query.containsKey("upload_id")) {
            boolean known = method.equals("PUT") || method.equals("POST") || method.equals("DELETE");
            return new ApiRequest(known ? Operation.UPLOAD : Operation.OTHER, method, bucket, null, query, ex);
        }
        if (method.equals("POST")) {
            return new ApiRequest(Operation.INSERT, method, bucket, query.get("name"), query, ex);
        }
        return new ApiRequest(Operation.OTHER, method, bucket, null, query, ex);
    }

    /** {@code .../b/BUCKET/o/OBJECT[/action...]}; {@code rest} starts at the bucket segment. */
    private static ApiRequest object(String method, String bucket, List<String> rest, Map<String, String> query,
                                     HttpExchange ex) {
        if (rest.size() == 4 && rest.get(3).equals("compose") && method.equals("POST")) {
            return new ApiRequest(Operation.COMPOSE, method, bucket, PathCodec.decode(rest.get(2)), query, ex);
        }
        if (rest.size() == 8 && (rest.get(3).equals("rewriteTo") || rest.get(3).equals("copyTo")) && rest.get(4).equals("b")
                && rest.get(6).equals("o") && method.equals("POST")) {
            return new ApiRequest(Operation.REWRITE, method, bucket, PathCodec.decode(rest.get(2)), query, ex,
                    PathCodec.decode(rest.get(5)), PathCodec.decode(rest.get(7)), rest.get(3));
        }
        if (rest.size() > 3 && OBJECT_SUBRESOURCES.contains(rest.get(3))) {
            return new ApiRequest(Operation.OTHER, method, bucket, PathCodec.decode(rest.get(2)), query, ex);
        }
        // Object names may contain '/', which the client encodes as %2F; join the rest to be lenient.
        String object = PathCodec.decode(String.join("/", rest.subList(2, rest.size())));
        Operation op = switch (method) {
            case "GET" -> Operation.GET;
            case "PATCH" -> Operation.PATCH;
            case "PUT" -> Operation.UPDATE;
            case "DELETE" -> Operation.DELETE;
            default -> Operation.OTHER;
        };
        return new ApiRequest(op, method, bucket, object, query, ex);
    }
}
