package io.github.gcslock.test;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * GCS's wire JSON of objects: the object resource rendered from a {@link StoredObject} (numbers as JSON
 * strings, as GCS sends them), a list page, and the writable fields read from a request body into
 * {@link ObjectMetadata} — for a new object, a patch (merge) or an update (replace).
 */
final class ObjectResource {

    private ObjectResource() {
    }

    /** The {@code storage#object} resource of {@code o}. */
    static JsonObject render(StoredObject o) {
        String path = "/b/" + o.bucket() + "/o/" + PathCodec.encodeSegment(o.name());
        JsonObject r = new JsonObject();
        r.addProperty("kind", "storage#object");
        r.addProperty("id", o.bucket() + "/" + o.name() + "/" + o.generation());
        r.addProperty("selfLink", "/storage/v1" + path);
        r.addProperty("mediaLink", "/download/storage/v1" + path + "?generation=" + o.generation() + "&alt=media");
        r.addProperty("name", o.name());
        r.addProperty("bucket", o.bucket());
        r.add("generation", new JsonPrimitive(Long.toString(o.generation())));
        r.add("metageneration", new JsonPrimitive(Long.toString(o.metageneration())));
        r.addProperty("contentType", o.contentType());
        r.addProperty("storageClass", "STANDARD");
        r.addProperty("size", Integer.toString(o.size()));
        if (o.md5() != null) {
            r.addProperty("md5Hash", o.md5());
        }
        if (o.componentCount() != null) {
            r.addProperty("componentCount", o.componentCount());
        }
        r.addProperty("crc32c", o.crc32c());
        r.addProperty("etag", etag(o));
        r.addProperty("timeCreated", o.timeCreated().toString());
        r.addProperty("updated", o.updated().toString());
        r.addProperty("timeStorageClassUpdated", o.timeCreated().toString());
        ObjectMetadata m = o.metadata();
        addIfSet(r, "cacheControl", m.cacheControl());
        addIfSet(r, "contentEncoding", m.contentEncoding());
        addIfSet(r, "contentDisposition", m.contentDisposition());
        addIfSet(r, "contentLanguage", m.contentLanguage());
        if (m.custom() != null) {
            JsonObject custom = new JsonObject();
            m.custom().forEach(custom::addProperty);
            r.add("metadata", custom);
        }
        addIfSet(r, "customTime", m.customTime());
        if (m.temporaryHold() != null) {
            r.addProperty("temporaryHold", m.temporaryHold());
        }
        if (m.eventBasedHold() != null) {
            r.addProperty("eventBasedHold", m.eventBasedHold());
        }
        return r;
    }

    /** The object's ETag: changes with every generation and metageneration. */
    static String etag(StoredObject o) {
        return Base64.getEncoder().encodeToString((o.generation() + "/" + o.metageneration()).getBytes(StandardCharsets.UTF_8));
    }

    /** The {@code storage#objects} reply of one list page. */
    static JsonObject list(ListQuery.Page<StoredObject> page) {
        JsonArray items = new JsonArray();
        page.items().forEach(o -> items.add(render(o)));
        JsonObject r = new JsonObject();
        r.addProperty("kind", "storage#objects");
        r.add("items", items);
        if (!page.prefixes().isEmpty()) {
            JsonArray prefixes = new JsonArray();
            page.prefixes().forEach(prefixes::add);
            r.add("prefixes", prefixes);
        }
        if (page.nextPageToken() != null) {
            r.addProperty("nextPageToken", page.nextPageToken());
        }
        return r;
    }

    /**
     * The writable fields of {@code json} (a new object's metadata, or the body of an update, which replaces
     * them all); anything else in it (name, bucket, hashes, ...) is not metadata. A null is "not set".
     */
    static ObjectMetadata metadataOf(JsonObject json) {
        return patched(ObjectMetadata.NONE, json);
    }

    /**
     * {@code current} with the fields of a PATCH body merged in: a field given replaces the stored one, a
     * null removes it, and {@code metadata} merges per key (a null value removes that key).
     */
    static ObjectMetadata patched(ObjectMetadata current, JsonObject patch) {
        if (patch == null) {
            return current;
        }
        Map<String, String> custom = current.custom();
        JsonElement given = patch.get("metadata");
        if (given != null) {
            if (given.isJsonObject()) {
                Map<String, String> merged = custom == null ? new LinkedHashMap<>() : new LinkedHashMap<>(custom);
                for (Map.Entry<String, JsonElement> e : given.getAsJsonObject().entrySet()) {
                    if (e.getValue().isJsonNull()) {
                        merged.remove(e.getKey());
                    } else {
                        merged.put(e.getKey(), text(e.getValue()));
                    }
                }
                custom = merged;
            } else if (given.isJsonNull()) {
                custom = null;
            } else {
                throw invalid("metadata", given);
            }
        }
        return new ObjectMetadata(
                string(patch, "contentType", current.contentType()),
                string(patch, "cacheControl", current.cacheControl()),
                string(patch, "contentEncoding", current.contentEncoding()),
                string(patch, "contentDisposition", current.contentDisposition()),
                string(patch, "contentLanguage", current.contentLanguage()),
                custom,
                string(patch, "customTime", current.customTime()),
                bool(patch, "temporaryHold", current.temporaryHold()),
                bool(patch, "eventBasedHold", current.eventBasedHold()));
    }

    private static String string(JsonObject json, String field, String current) {
        JsonElement e = json.get(field);
        if (e == null) {
            return current;
        }
        if (e.isJsonNull()) {
            return null;
        }
        if (!e.isJsonPrimitive()) {
            throw invalid(field, e);
        }
        return e.getAsString();
    }

    private static Boolean bool(JsonObject json, String field, Boolean current) {
        JsonElement e = json.get(field);
        if (e == null) {
            return current;
        }
        if (e.isJsonNull()) {
            return null;
        }
        String v = e.isJsonPrimitive() ? e.getAsString() : "";
        if (!v.equals("true") && !v.equals("false")) {
            throw invalid(field, e);
        }
        return Boolean.valueOf(v);
    }

    private static String text(JsonElement e) {
        return e.isJsonPrimitive() ? e.getAsString() : e.toString();
    }

    private static GcsError invalid(String field, JsonElement value) {
        return new GcsError(400, "invalid", "Invalid value for " + field + ": " + value);
    }

    private static void addIfSet(JsonObject r, String field, String value) {
        if (value != null) {
            r.addProperty(field, value);
        }
    }
}
