package io.github.gcslock.test;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Operation dispatch: serves each routed {@link ApiRequest} against the {@link ObjectStore} (and the
 * {@link ResumableUploads}) and turns the outcome into a {@link Reply}. Checks first that the emulator
 * honours every parameter of the request ({@link SupportedParameters}). Faults are not applied here:
 * see {@link FaultPipeline}.
 */
final class ApiOperations {

    private final ObjectStore store;
    private final ResumableUploads uploads;

    ApiOperations(ObjectStore store) {
        this.store = store;
        this.uploads = new ResumableUploads(store);
    }

    /** Serves {@code req} with its {@code body}; a {@link GcsError} is GCS's answer to it. */
    Reply serve(ApiRequest req, byte[] body) {
        if (req.op() == Operation.OTHER) {
            throw SupportedParameters.notImplemented(req.method() + " " + req.exchange().getRequestURI().getRawPath()
                    + " (only the JSON API's object insert/get/patch/update/delete/list/compose/rewrite/copy, "
                    + "resumable uploads and bucket insert/get/list/delete are emulated)");
        }
        SupportedParameters.check(req.op(), req.query(), req.exchange().getRequestHeaders());
        Preconditions pre = Preconditions.from(req);
        Long generation = req.longParameter("generation");
        return switch (req.op()) {
            case INSERT -> insert(req, body, pre);
            case UPLOAD -> upload(req, body);
            case GET -> "media".equals(req.query().get("alt"))
                    ? MediaDownload.reply(store.get(req.bucket(), req.object(), generation, pre), req.header("Range"))
                    : object(store.get(req.bucket(), req.object(), generation, pre));
            case PATCH -> {
                JsonObject patch = parseJson(body);
                yield object(store.update(req.bucket(), req.object(), generation,
                        current -> ObjectResource.patched(current, patch), pre));
            }
            case UPDATE -> {
                ObjectMetadata replacement = ObjectResource.metadataOf(parseJson(body));
                yield object(store.update(req.bucket(), req.object(), generation, current -> replacement, pre));
            }
            case DELETE -> {
                store.delete(req.bucket(), req.object(), generation, pre);
                yield Reply.empty(204);
            }
            case COMPOSE -> object(compose(req, parseJson(body), pre));
            case REWRITE -> rewrite(req, body, pre);
            case LIST -> Reply.json(200, ObjectResource.list(store.list(req.bucket(), ListQuery.from(req.query()),
                    "true".equals(req.query().get("versions")))));
            case BUCKET_GET -> Reply.json(200, BucketResource.render(store.getBucket(req.bucket())));
            case BUCKET_LIST -> Reply.json(200, BucketResource.list(store.buckets(), req.query().getOrDefault("prefix", "")));
            case BUCKET_INSERT -> {
                JsonObject settings = parseJson(body);
                yield Reply.json(200, BucketResource.render(store.createBucket(BucketResource.nameOf(settings), settings)));
            }
            case BUCKET_DELETE -> {
                store.deleteBucket(req.bucket());
                yield Reply.empty(204);
            }
            case OTHER -> throw new IllegalStateException("unrouted operation " + req.op());
        };
    }

    private Reply insert(ApiRequest req, byte[] body, Preconditions pre) {
        String uploadType = req.query().getOrDefault("uploadType", "media");
        String contentType = req.header("Content-Type");
        JsonObject meta;
        byte[] content;
        switch (uploadType) {
            case "multipart" -> {
                List<byte[]> parts = Multipart.parts(contentType, body);
                if (parts.size() != 2) {
                    throw new GcsError(400, "invalid", "multipart upload needs 2 parts, got " + parts.size());
                }
                meta = parseJson(Multipart.partBody(parts.get(0)));
                content = Multipart.partBody(parts.get(1));
            }
            case "media" -> {
                meta = new JsonObject();
                if (contentType != null) {
                    meta.addProperty("contentType", contentType);
                }
                content = body;
            }
            case "resumable" -> {
                return startResumable(req, body, pre);
            }
            default -> throw SupportedParameters.notImplemented("uploadType=" + uploadType);
        }
        String name = objectName(req, meta);
        ObjectStore.validateName(name);
        Hashes.checkMetadata(meta, content);
        return object(store.insert(req.bucket(), name, ObjectResource.metadataOf(meta), content, pre));
    }

    private static Reply object(StoredObject o) {
        return Reply.json(200, ObjectResource.render(o));
    }

    /** The object's name: the {@code name} query parameter, else the metadata's {@code name}. */
    private static String objectName(ApiRequest req, JsonObject meta) {
        return req.object() != null ? req.object() : (meta.has("name") ? meta.get("name").getAsString() : null);
    }

    /** Starts a resumable upload: the object's metadata is the body; the session URL goes in Location. */
    private Reply startResumable(ApiRequest req, byte[] body, Preconditions pre) {
        JsonObject meta = parseJson(body);
        if (!meta.has("contentType")) {
            String uploadContentType = req.header("X-Upload-Content-Type");
            if (uploadContentType != null && !uploadContentType.isEmpty()) {
                meta.addProperty("contentType", uploadContentType);
            }
        }
        Long declared = null;
        String length = req.header("X-Upload-Content-Length");
        if (length != null && !length.isEmpty()) {
            try {
                declared = Long.parseLong(length.trim());
            } catch (NumberFormatException e) {
                throw new GcsError(400, "invalid", "Invalid X-Upload-Content-Length: " + length);
            }
        }
        String id = uploads.start(req.bucket(), objectName(req, meta), meta, pre, declared);
        String host = req.header("Host");
        if (host == null) {
            host = "127.0.0.1:" + req.localPort();
        }
        String location = "http://" + host + "/upload/storage/v1/b/" + PathCodec.encodeSegment(req.bucket())
                + "/o?uploadType=resumable&upload_id=" + id;
        return Reply.empty(200, Map.of("Location", location));
    }

    /** A PUT (chunk, status query) or DELETE (cancel) on a resumable upload session. */
    private Reply upload(ApiRequest req, byte[] body) {
        String id = req.query().get("upload_id");
        if (req.method().equals("DELETE")) {
            uploads.cancel(id);
            return Reply.empty(499);
        }
        ResumableUploads.Progress p = uploads.put(id, req.header("Content-Range"), body, req.header("x-goog-hash"));
        if (p.object() != null) {
            return object(p.object());
        }
        // 308 "Resume Incomplete"; without a Range header it means nothing is persisted yet.
        return Reply.empty(308, p.persisted() == 0 ? Map.of() : Map.of("Range", "bytes=0-" + (p.persisted() - 1)));
    }

    /** {@code {"sourceObjects":[{"name","generation","objectPreconditions":{"ifGenerationMatch"}}],"destination":{...}}}. */
    private StoredObject compose(ApiRequest req, JsonObject body, Preconditions pre) {
        List<ObjectStore.ComposeSource> sources = new ArrayList<>();
        if (body.has("sourceObjects") && body.get("sourceObjects").isJsonArray()) {
            for (JsonElement e : body.getAsJsonArray("sourceObjects")) {
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
        return store.compose(req.bucket(), req.object(), sources, ObjectResource.metadataOf(destination), pre);
    }

    /** {@code objects.rewrite} answers a rewrite response around the object; {@code objects.copy} the object. */
    private Reply rewrite(ApiRequest req, byte[] body, Preconditions pre) {
        StoredObject object = store.rewrite(req.bucket(), req.object(), req.longParameter("sourceGeneration"),
                Preconditions.ofSource(req), req.targetBucket(), req.targetObject(),
                ObjectResource.metadataOf(parseJson(body)), pre);
        if (req.action().equals("copyTo")) {
            return object(object);
        }
        JsonObject r = new JsonObject();
        r.addProperty("kind", "storage#rewriteResponse");
        r.addProperty("totalBytesRewritten", Integer.toString(object.size()));
        r.addProperty("objectSize", Integer.toString(object.size()));
        r.addProperty("done", true);
        r.add("resource", ObjectResource.render(object));
        return Reply.json(200, r);
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
}
