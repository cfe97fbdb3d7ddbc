package io.github.gcslock.test;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;

/**
 * Routes the GCS JSON-API requests that {@code google-cloud-storage} sends (the shapes are listed in
 * docs/DESIGN.md, "GCS requests", and gcslock-test/README.md) to the
 * {@link ObjectStore}, with the {@link Faults} applied around each one.
 */
final class JsonApiHandler implements HttpHandler {

    private static final Logger log = LoggerFactory.getLogger(JsonApiHandler.class);

    private final ObjectStore store;
    private final ResumableUploads uploads;
    private final Faults faults;

    JsonApiHandler(ObjectStore store, Faults faults) {
        this.store = store;
        this.uploads = new ResumableUploads(store);
        this.faults = faults;
    }

    /** A parsed request: which operation, on what, with which parameters. */
    private record Request(Operation op, String bucket, String object, Map<String, String> query,
                           String method, HttpExchange exchange, String targetBucket, String targetObject, String action) {

        Request(Operation op, String bucket, String object, Map<String, String> query, String method, HttpExchange exchange) {
            this(op, bucket, object, query, method, exchange, null, null, null);
        }
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try {
            Request req;
            try {
                req = parse(exchange);
            } catch (GcsError e) {
                sendError(exchange, e);
                return;
            }
            if (log.isTraceEnabled()) {
                log.trace("{} {} {} ({})", req.op, req.method, exchange.getRequestURI(), exchange.getRequestHeaders().keySet());
            }
            faults.count(req.op);
            ClientFaults client = faults.clientAt(exchange.getLocalAddress().getPort());
            ClientFaults.Admission admission = client == null ? ClientFaults.Admission.PROCESS : client.admit(req.op);
            if (admission == ClientFaults.Admission.REFUSE) {
                return; // partitioned: the request never reached us, and the client gets no reply
            }
            long latency = faults.nextLatencyNanos();
            if (latency > 0) {
                TimeUnit.NANOSECONDS.sleep(latency);
            }
            Runnable action = faults.takeAction(req.op);
            if (action != null) {
                action.run();
            }
            Integer failure = faults.takeFailure(req.op);
            byte[] body = readBody(exchange);
            if (failure != null) {
                sendError(exchange, new GcsError(failure, GcsError.defaultReason(failure), "Injected failure " + failure));
                return;
            }
            Reply reply;
            try {
                reply = execute(req, body);
            } catch (GcsError e) {
                if (admission == ClientFaults.Admission.PROCESS_AND_LOSE_REPLY) {
                    return; // the partition started while the request was in flight
                }
                if (client != null) {
                    client.beforeReply();
                }
                if (faults.shouldDropReply(req.op)) {
                    return; // closing the exchange without headers closes the connection: the reply is lost
                }
                sendError(exchange, e);
                return;
            }
            if (admission == ClientFaults.Admission.PROCESS_AND_LOSE_REPLY) {
                return; // committed, and the partition started before the reply left
            }
            if (client != null) {
                client.beforeReply(); // committed; the reply may come after the client gave up
            }
            if (faults.shouldDropReply(req.op)) {
                return; // committed, but the client never hears of it
            }
            reply.send(exchange);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.error("emulator failed on {} {}", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            sendError(exchange, new GcsError(500, "internalError", String.valueOf(e)));
        } finally {
            exchange.close();
        }
    }

    /** Object sub-resources and actions (a literal '/' after the object name): not emulated, so 501. */
    private static final java.util.Set<String> OBJECT_SUBRESOURCES = java.util.Set.of(
            "acl", "compose", "copyTo", "rewriteTo", "restore", "moveTo", "bulkRestore");

    private Request parse(HttpExchange ex) {
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
            String bucket = PathCodec.decode(seg.get(5));
            if (query.containsKey("upload_id")) {
                boolean known = method.equals("PUT") || method.equals("POST") || method.equals("DELETE");
                return new Request(known ? Operation.UPLOAD : Operation.OTHER, bucket, null, query, method, ex);
            }
            if (method.equals("POST")) {
                return new Request(Operation.INSERT, bucket, query.get("name"), query, method, ex);
            }
            return new Request(Operation.OTHER, bucket, null, query, method, ex);
        }
        int base = 0;
        if (seg.size() >= 4 && seg.get(1).equals("download") && seg.get(2).equals("storage")) {
            base = 1;
        }
        if (seg.size() < 4 + base || !seg.get(1 + base).equals("storage") || !seg.get(2 + base).equals("v1")
                || !seg.get(3 + base).equals("b")) {
            // Batch requests, projects (HMAC keys, service account), the XML API, ...
            return new Request(Operation.OTHER, null, null, query, method, ex);
        }
        List<String> rest = seg.subList(4 + base, seg.size());
        if (rest.isEmpty()) {
            if (method.equals("POST")) {
                return new Request(Operation.BUCKET_INSERT, null, null, query, method, ex);
            }
            return new Request(Operation.OTHER, null, null, query, method, ex);
        }
        String bucket = PathCodec.decode(rest.get(0));
        if (rest.size() == 1) {
            return switch (method) {
                case "GET" -> new Request(Operation.BUCKET_GET, bucket, null, query, method, ex);
                case "DELETE" -> new Request(Operation.BUCKET_DELETE, bucket, null, query, method, ex);
                default -> new Request(Operation.OTHER, bucket, null, query, method, ex);
            };
        }
        if (!rest.get(1).equals("o")) {
            return new Request(Operation.OTHER, bucket, null, query, method, ex);
        }
        if (rest.size() == 2) {
            return new Request(method.equals("GET") ? Operation.LIST : Operation.OTHER, bucket, null, query, method, ex);
        }
        if (rest.size() == 4 && rest.get(3).equals("compose") && method.equals("POST")) {
            return new Request(Operation.COMPOSE, bucket, PathCodec.decode(rest.get(2)), query, method, ex);
        }
        if (rest.size() == 8 && (rest.get(3).equals("rewriteTo") || rest.get(3).equals("copyTo")) && rest.get(4).equals("b")
                && rest.get(6).equals("o") && method.equals("POST")) {
            return new Request(Operation.REWRITE, bucket, PathCodec.decode(rest.get(2)), query, method, ex,
                    PathCodec.decode(rest.get(5)), PathCodec.decode(rest.get(7)), rest.get(3));
        }
        if (rest.size() > 3 && OBJECT_SUBRESOURCES.contains(rest.get(3))) {
            return new Request(Operation.OTHER, bucket, PathCodec.decode(rest.get(2)), query, method, ex);
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
        return new Request(op, bucket, object, query, method, ex);
    }

    private Reply execute(Request req, byte[] body) {
        if (req.op == Operation.OTHER) {
            throw SupportedParameters.notImplemented(req.method + " " + req.exchange.getRequestURI().getRawPath()
                    + " (only the JSON API's object insert/get/patch/update/delete/list/compose/rewrite/copy, "
                    + "resumable uploads and bucket insert/get/delete are emulated)");
        }
        SupportedParameters.check(req.op, req.query, req.exchange.getRequestHeaders());
        ObjectStore.Preconditions pre = ObjectStore.Preconditions.from(req.query);
        Long generation = generation(req.query);
        switch (req.op) {
            case INSERT: {
                return insert(req, body, pre);
            }
            case UPLOAD: {
                return upload(req, body);
            }
            case GET: {
                if ("media".equals(req.query.get("alt"))) {
                    return media(store.media(req.bucket, req.object, generation, pre),
                            req.exchange.getRequestHeaders().getFirst("Range"));
                }
                return Reply.json(200, store.get(req.bucket, req.object, generation, pre));
            }
            case PATCH:
            case UPDATE: {
                JsonObject json = parseJson(body);
                return Reply.json(200, store.update(req.bucket, req.object, generation, json, req.op == Operation.UPDATE, pre));
            }
            case DELETE: {
                store.delete(req.bucket, req.object, generation, pre);
                return Reply.empty(204);
            }
            case COMPOSE: {
                return Reply.json(200, compose(req, parseJson(body), pre));
            }
            case REWRITE: {
                Long sourceGeneration = req.query.containsKey("sourceGeneration")
                        ? generation(Map.of("generation", req.query.get("sourceGeneration"))) : null;
                JsonObject object = store.rewrite(req.bucket, req.object, sourceGeneration,
                        ObjectStore.Preconditions.ofSource(req.query), req.targetBucket, req.targetObject, parseJson(body), pre);
                if (req.action.equals("copyTo")) {
                    return Reply.json(200, object);
                }
                JsonObject r = new JsonObject();
                r.addProperty("kind", "storage#rewriteResponse");
                r.addProperty("totalBytesRewritten", object.get("size").getAsString());
                r.addProperty("objectSize", object.get("size").getAsString());
                r.addProperty("done", true);
                r.add("resource", object);
                return Reply.json(200, r);
            }
            case LIST: {
                return Reply.json(200, store.list(req.bucket, ListQuery.from(req.query),
                        "true".equals(req.query.get("versions"))));
            }
            case BUCKET_GET:
                return Reply.json(200, store.getBucket(req.bucket));
            case BUCKET_INSERT:
                return Reply.json(200, store.createBucket(parseJson(body)));
            case BUCKET_DELETE:
                store.deleteBucket(req.bucket);
                return Reply.empty(204);
            default:
                throw new IllegalStateException("unrouted operation " + req.op);
        }
    }

    /** {@code {"sourceObjects":[{"name","generation","objectPreconditions":{"ifGenerationMatch"}}],"destination":{...}}}. */
    private JsonObject compose(Request req, JsonObject body, ObjectStore.Preconditions pre) {
        List<ObjectStore.ComposeSource> sources = new java.util.ArrayList<>();
        if (body.has("sourceObjects") && body.get("sourceObjects").isJsonArray()) {
            for (com.google.gson.JsonElement e : body.getAsJsonArray("sourceObjects")) {
                JsonObject src = e.getAsJsonObject();
                if (!src.has("name")) {
                    throw new GcsError(400, "required", "Required field 'sourceObjects[].name' is missing.");
                }
                Long gen = src.has("generation") ? src.get("generation").getAsLong() : null;
                Long match = null;
                if (src.has("objectPreconditions") && src.getAsJsonObject("objectPreconditions").has("ifGenerationMatch")) {
                    match = src.getAsJsonObject("objectPreconditions").get("ifGenerationMatch").getAsLong();
                }
                sources.add(new ObjectStore.ComposeSource(src.get("name").getAsString(), gen, match));
            }
        }
        JsonObject destination = body.has("destination") && body.get("destination").isJsonObject()
                ? body.getAsJsonObject("destination") : new JsonObject();
        return store.compose(req.bucket, req.object, sources, destination, pre);
    }

    private static Long generation(Map<String, String> query) {
        String g = query.get("generation");
        if (g == null) {
            return null;
        }
        try {
            return Long.parseLong(g);
        } catch (NumberFormatException e) {
            throw new GcsError(400, "invalid", "Invalid value for generation: " + g);
        }
    }

    private Reply insert(Request req, byte[] body, ObjectStore.Preconditions pre) {
        String uploadType = req.query.getOrDefault("uploadType", "media");
        String contentType = req.exchange.getRequestHeaders().getFirst("Content-Type");
        JsonObject meta;
        byte[] content;
        switch (uploadType) {
            case "multipart": {
                List<byte[]> parts = Multipart.parts(contentType, body);
                if (parts.size() != 2) {
                    throw new GcsError(400, "invalid", "multipart upload needs 2 parts, got " + parts.size());
                }
                meta = parseJson(Multipart.partBody(parts.get(0)));
                content = Multipart.partBody(parts.get(1));
                break;
            }
            case "media": {
                meta = new JsonObject();
                if (contentType != null) {
                    meta.addProperty("contentType", contentType);
                }
                content = body;
                break;
            }
            case "resumable": {
                return startResumable(req, body, pre);
            }
            default:
                throw SupportedParameters.notImplemented("uploadType=" + uploadType);
        }
        String name = req.object != null ? req.object : (meta.has("name") ? meta.get("name").getAsString() : null);
        return Reply.json(200, store.insert(req.bucket, name, meta, content, pre));
    }

    /** Starts a resumable upload: the object's metadata is the body; the session URL goes in Location. */
    private Reply startResumable(Request req, byte[] body, ObjectStore.Preconditions pre) {
        JsonObject meta = parseJson(body);
        String name = req.object != null ? req.object : (meta.has("name") ? meta.get("name").getAsString() : null);
        if (!meta.has("contentType")) {
            String uploadContentType = req.exchange.getRequestHeaders().getFirst("X-Upload-Content-Type");
            if (uploadContentType != null && !uploadContentType.isEmpty()) {
                meta.addProperty("contentType", uploadContentType);
            }
        }
        Long declared = null;
        String length = req.exchange.getRequestHeaders().getFirst("X-Upload-Content-Length");
        if (length != null && !length.isEmpty()) {
            try {
                declared = Long.parseLong(length.trim());
            } catch (NumberFormatException e) {
                throw new GcsError(400, "invalid", "Invalid X-Upload-Content-Length: " + length);
            }
        }
        String id = uploads.start(req.bucket, name, meta, pre, declared);
        String host = req.exchange.getRequestHeaders().getFirst("Host");
        if (host == null) {
            host = "127.0.0.1:" + req.exchange.getLocalAddress().getPort();
        }
        String location = "http://" + host + "/upload/storage/v1/b/" + PathCodec.encodeSegment(req.bucket)
                + "/o?uploadType=resumable&upload_id=" + id;
        return new Reply(200, null, new byte[0], Map.of("Location", location));
    }

    /** A PUT (chunk, status query) or DELETE (cancel) on a resumable upload session. */
    private Reply upload(Request req, byte[] body) {
        String id = req.query.get("upload_id");
        if (req.method.equals("DELETE")) {
            uploads.cancel(id);
            return Reply.empty(499);
        }
        ResumableUploads.Progress p = uploads.put(id, req.exchange.getRequestHeaders().getFirst("Content-Range"), body,
                req.exchange.getRequestHeaders().getFirst("x-goog-hash"));
        if (p.object() != null) {
            return Reply.json(200, p.object());
        }
        // 308 "Resume Incomplete"; without a Range header it means nothing is persisted yet.
        Map<String, String> headers = p.persisted() == 0 ? Map.of() : Map.of("Range", "bytes=0-" + (p.persisted() - 1));
        return new Reply(308, null, new byte[0], headers);
    }

    /** A media download: the content (or the asked byte range) with GCS's object headers, x-goog-hash included. */
    private static Reply media(ObjectStore.Media m, String rangeHeader) {
        JsonObject o = m.object();
        byte[] content = m.content();
        Map<String, String> headers = new java.util.LinkedHashMap<>();
        headers.put("x-goog-hash", Hashes.header(o.get("crc32c").getAsString(),
                o.has("md5Hash") ? o.get("md5Hash").getAsString() : null));
        headers.put("x-goog-generation", o.get("generation").getAsString());
        headers.put("x-goog-metageneration", o.get("metageneration").getAsString());
        headers.put("x-goog-stored-content-length", Integer.toString(content.length));
        headers.put("x-goog-stored-content-encoding", o.has("contentEncoding") ? o.get("contentEncoding").getAsString() : "identity");
        headers.put("x-goog-storage-class", o.get("storageClass").getAsString());
        headers.put("ETag", o.get("etag").getAsString());
        headers.put("Accept-Ranges", "bytes");
        String contentType = o.get("contentType").getAsString();
        ByteRange range = ByteRange.parse(rangeHeader, content.length);
        if (range == null) {
            return new Reply(200, contentType, content, headers);
        }
        headers.put("Content-Range", "bytes " + range.first + "-" + range.last + "/" + content.length);
        return new Reply(206, contentType, Arrays.copyOfRange(content, (int) range.first, (int) range.last + 1), headers);
    }

    /** A single {@code Range: bytes=...} of a media download, clamped to the content; null for the whole content. */
    private record ByteRange(long first, long last) {

        static ByteRange parse(String header, int size) {
            if (header == null || header.isBlank()) {
                return null;
            }
            String h = header.trim();
            if (!h.startsWith("bytes=")) {
                throw new GcsError(400, "invalid", "Malformed Range header: " + header);
            }
            String spec = h.substring("bytes=".length()).trim();
            if (spec.contains(",")) {
                throw SupportedParameters.notImplemented("multiple byte ranges (Range: " + header + ")");
            }
            int dash = spec.indexOf('-');
            try {
                if (dash < 0) {
                    throw new NumberFormatException(spec);
                }
                String a = spec.substring(0, dash).trim();
                String b = spec.substring(dash + 1).trim();
                long first;
                long last;
                if (a.isEmpty()) { // suffix: the last N bytes
                    long n = Long.parseLong(b);
                    if (n == 0) {
                        throw unsatisfiable(header, size);
                    }
                    first = Math.max(0, size - n);
                    last = size - 1;
                } else {
                    first = Long.parseLong(a);
                    last = b.isEmpty() ? size - 1 : Math.min(Long.parseLong(b), size - 1);
                    if (!b.isEmpty() && Long.parseLong(b) < first) {
                        throw new GcsError(400, "invalid", "Malformed Range header: " + header);
                    }
                }
                if (size == 0 && first == 0) {
                    return null; // "bytes=0-" of an empty object: the (empty) whole
                }
                if (first >= size) {
                    throw unsatisfiable(header, size);
                }
                return new ByteRange(first, last);
            } catch (NumberFormatException e) {
                throw new GcsError(400, "invalid", "Malformed Range header: " + header);
            }
        }

        private static GcsError unsatisfiable(String header, int size) {
            return new GcsError(416, "requestedRangeNotSatisfiable", "The requested range " + header
                    + " cannot be satisfied for an object of " + size + " bytes.");
        }
    }

    private static JsonObject parseJson(byte[] body) {
        if (body.length == 0) {
            return new JsonObject();
        }
        try {
            return JsonParser.parseString(new String(body, StandardCharsets.UTF_8)).getAsJsonObject();
        } catch (RuntimeException e) {
            throw new GcsError(400, "parseError", "Parse Error: " + e.getMessage());
        }
    }

    private static byte[] readBody(HttpExchange ex) throws IOException {
        InputStream in = ex.getRequestBody();
        String encoding = ex.getRequestHeaders().getFirst("Content-Encoding");
        if (encoding != null && encoding.equalsIgnoreCase("gzip")) {
            in = new GZIPInputStream(in);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }

    private static void sendError(HttpExchange ex, GcsError e) {
        JsonObject err = new JsonObject();
        err.addProperty("code", e.status);
        err.addProperty("message", e.getMessage());
        JsonArray errors = new JsonArray();
        JsonObject detail = new JsonObject();
        detail.addProperty("message", e.getMessage());
        detail.addProperty("domain", "global");
        detail.addProperty("reason", e.reason);
        if (e.location != null) {
            detail.addProperty("locationType", "header");
            detail.addProperty("location", e.location);
        }
        errors.add(detail);
        err.add("errors", errors);
        JsonObject root = new JsonObject();
        root.add("error", err);
        try {
            if (e.status == 304) {
                ex.sendResponseHeaders(304, -1);
                return;
            }
            Reply.json(e.status, root).send(ex);
        } catch (IOException io) {
            log.debug("could not send error reply", io);
        }
    }

    /** A reply ready to send. */
    private record Reply(int status, String contentType, byte[] body, Map<String, String> headers) {

        Reply(int status, String contentType, byte[] body) {
            this(status, contentType, body, Map.of());
        }

        static Reply json(int status, JsonObject json) {
            return new Reply(status, "application/json; charset=UTF-8", json.toString().getBytes(StandardCharsets.UTF_8));
        }

        static Reply empty(int status) {
            return new Reply(status, null, new byte[0]);
        }

        void send(HttpExchange ex) throws IOException {
            if (contentType != null) {
                ex.getResponseHeaders().set("Content-Type", contentType);
            }
            headers.forEach((k, v) -> ex.getResponseHeaders().set(k, v));
            if (body.length == 0) {
                ex.sendResponseHeaders(status, -1);
                return;
            }
            ex.sendResponseHeaders(status, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
