package io.github.gcslock.test;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

/**
 * GCS's wire JSON of buckets. A bucket's settings are kept as the client gave them (retention policy,
 * versioning, ...) and rendered back with the fields GCS adds; the emulator itself only reads whether
 * versioning is on.
 */
final class BucketResource {

    private BucketResource() {
    }

    /** The name of the bucket a {@code buckets.insert} body asks for; 400 when missing. */
    static String nameOf(JsonObject body) {
        JsonElement name = body.get("name");
        if (name == null || name.isJsonNull() || name.getAsString().isEmpty()) {
            throw new GcsError(400, "required", "Required field 'name' is missing.");
        }
        return name.getAsString();
    }

    /** Whether the settings turn object versioning on. */
    static boolean isVersioned(JsonObject settings) {
        JsonElement v = settings.get("versioning");
        return v != null && v.isJsonObject() && v.getAsJsonObject().has("enabled")
                && v.getAsJsonObject().get("enabled").getAsBoolean();
    }

    /** The {@code storage#bucket} resource of {@code b}. */
    static JsonObject render(ObjectStore.Bucket b) {
        JsonObject r = b.settings().deepCopy();
        r.addProperty("kind", "storage#bucket");
        r.addProperty("id", b.name());
        r.addProperty("name", b.name());
        r.addProperty("selfLink", "/storage/v1/b/" + b.name());
        r.addProperty("projectNumber", "0");
        r.addProperty("metageneration", "1");
        if (!r.has("location")) {
            r.addProperty("location", "US");
        }
        if (!r.has("storageClass")) {
            r.addProperty("storageClass", "STANDARD");
        }
        r.addProperty("timeCreated", b.created().toString());
        r.addProperty("updated", b.created().toString());
        r.addProperty("etag", "CAE=");
        return r;
    }

    /** The {@code storage#buckets} list of the buckets whose name starts with {@code prefix}, in one page. */
    static JsonObject list(java.util.List<ObjectStore.Bucket> buckets, String prefix) {
        JsonObject r = new JsonObject();
        r.addProperty("kind", "storage#buckets");
        com.google.gson.JsonArray items = new com.google.gson.JsonArray();
        buckets.stream().filter(b -> b.name().startsWith(prefix)).forEach(b -> items.add(render(b)));
        r.add("items", items);
        return r;
    }
}
