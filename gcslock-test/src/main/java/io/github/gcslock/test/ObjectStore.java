package io.github.gcslock.test;

import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The emulator's state: buckets and the live generation of each object. Every mutation runs under
 * one monitor, so each is atomic with its precondition check, as on GCS.
 */
final class ObjectStore {

    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final Supplier<Clock> clock;
    private final Supplier<Duration> writeRateInterval;
    private final Runnable onRateLimited;
    private long lastGeneration;

    ObjectStore(Supplier<Clock> clock, Supplier<Duration> writeRateInterval, Runnable onRateLimited) {
        this.clock = clock;
        this.writeRateInterval = writeRateInterval;
        this.onRateLimited = onRateLimited;
    }

    static final class Bucket {
        final JsonObject resource;
        final NavigableMap<String, StoredObject> objects = new TreeMap<>();

        Bucket(JsonObject resource) {
            this.resource = resource;
        }
    }

    static final class StoredObject {
        final String bucket;
        final String name;
        final long generation;
        long metageneration;
        final byte[] content;
        /** Base64 of the content's big-endian digests, computed once: the content never changes. */
        final String md5;
        final String crc32c;
        final Instant timeCreated;
        Instant updated;
        /** Writable metadata fields as JSON: contentType, cacheControl, metadata, contentEncoding, ... */
        JsonObject fields;

        /** For a composed object: how many components; GCS gives such objects no md5Hash. Null otherwise. */
        final Integer componentCount;

        StoredObject(String bucket, String name, long generation, byte[] content, Instant created, JsonObject fields) {
            this(bucket, name, generation, content, created, fields, null);
        }

        StoredObject(String bucket, String name, long generation, byte[] content, Instant created, JsonObject fields,
                     Integer componentCount) {
            this.bucket = bucket;
            this.name = name;
            this.generation = generation;
            this.metageneration = 1;
            this.content = content;
            this.componentCount = componentCount;
            this.md5 = componentCount == null ? Hashes.md5(content) : null;
            this.crc32c = Hashes.crc32c(content);
            this.timeCreated = created;
            this.updated = created;
            this.fields = fields;
        }
    }

    Instant now() {
        return clock.get().instant();
    }

    // ---- buckets ----

    JsonObject createBucket(JsonObject body) {
        JsonElement nameEl = body.get("name");
        if (nameEl == null || nameEl.isJsonNull() || nameEl.getAsString().isEmpty()) {
            throw new GcsError(400, "required", "Required field 'name' is missing.");
        }
        String name = nameEl.getAsString();
        synchronized (this) {
            if (buckets.containsKey(name)) {
                throw new GcsError(409, "conflict", "Your previous request to create the named bucket succeeded and you already own it.");
            }
            JsonObject r = body.deepCopy();
            Instant now = now();
            r.addProperty("kind", "storage#bucket");
            r.addProperty("id", name);
            r.addProperty("selfLink", "/storage/v1/b/" + name);
            r.addProperty("projectNumber", "0");
            r.addProperty("metageneration", "1");
            if (!r.has("location")) {
                r.addProperty("location", "US");
            }
            if (!r.has("storageClass")) {
                r.addProperty("storageClass", "STANDARD");
            }
            r.addProperty("timeCreated", now.toString());
            r.addProperty("updated", now.toString());
            r.addProperty("etag", "CAE=");
            buckets.put(name, new Bucket(r));
            return r.deepCopy();
        }
    }

    JsonObject getBucket(String name) {
        return bucket(name).resource.deepCopy();
    }

    synchronized void deleteBucket(String name) {
        Bucket b = bucket(name);
        if (!b.objects.isEmpty()) {
            throw new GcsError(409, "conflict", "The bucket you tried to delete is not empty.");
        }
        buckets.remove(name);
    }

    private Bucket bucket(String name) {
        Bucket b = buckets.get(name);
        if (b == null) {
            throw new GcsError(404, "notFound", "The specified bucket does not exist.");
        }
        return b;
    }

    // ---- objects ----

    JsonObject insert(String bucketName, String name, JsonObject fields, byte[] content, Preconditions pre) {
        validateName(name);
        Hashes.checkMetadata(fields, content);
        synchronized (this) {
            Bucket b = bucket(bucketName);
            StoredObject current = b.objects.get(name);
            pre.check(current);
            checkWriteRate(bucketName, name);
            Instant now = now();
            StoredObject o = new StoredObject(bucketName, name, nextGeneration(now), content, now, writable(fields));
            b.objects.put(name, o);
            touchWrite(bucketName, name);
            return toJson(o);
        }
    }

    /** One source of a compose: a name, optionally a generation and an {@code ifGenerationMatch}. */
    record ComposeSource(String name, Long generation, Long ifGenerationMatch) {
    }

    /**
     * {@code objects.compose}: the sources' contents concatenated into {@code destination} of the same
     * bucket, atomically with the checks of every source and of the destination's preconditions.
     */
    JsonObject compose(String bucketName, String destination, List<ComposeSource> sources, JsonObject fields,
                       Preconditions pre) {
        validateName(destination);
        if (sources.isEmpty() || sources.size() > 32) {
            throw new GcsError(400, "invalid", "A compose takes 1 to 32 source objects, got " + sources.size() + ".");
        }
        synchronized (this) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            int components = 0;
            for (ComposeSource src : sources) {
                StoredObject o = live(bucketName, src.name(), src.generation());
                if (src.ifGenerationMatch() != null && src.ifGenerationMatch() != o.generation) {
                    throw new GcsError(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.",
                            "ifGenerationMatch of source " + src.name());
                }
                out.writeBytes(o.content);
                components += o.componentCount == null ? 1 : o.componentCount;
            }
            Bucket b = bucket(bucketName);
            pre.check(b.objects.get(destination));
            checkWriteRate(bucketName, destination);
            Instant now = now();
            StoredObject o = new StoredObject(bucketName, destination, nextGeneration(now), out.toByteArray(), now,
                    writable(fields), components);
            b.objects.put(destination, o);
            touchWrite(bucketName, destination);
            return toJson(o);
        }
    }

    /**
     * {@code objects.rewrite} (and {@code copy}): a new object with the source's content, in one call.
     * The destination's metadata is the given fields, or the source's when none are given, as on GCS.
     */
    JsonObject rewrite(String srcBucket, String srcName, Long srcGeneration, Preconditions srcPre,
                       String dstBucket, String dstName, JsonObject fields, Preconditions dstPre) {
        validateName(dstName);
        synchronized (this) {
            StoredObject src = live(srcBucket, srcName, srcGeneration);
            srcPre.check(src);
            Bucket b = bucket(dstBucket);
            dstPre.check(b.objects.get(dstName));
            checkWriteRate(dstBucket, dstName);
            JsonObject given = writable(fields);
            JsonObject dstFields = given.size() > 0 ? given : src.fields.deepCopy();
            Instant now = now();
            StoredObject o = new StoredObject(dstBucket, dstName, nextGeneration(now), src.content, now, dstFields,
                    src.componentCount);
            b.objects.put(dstName, o);
            touchWrite(dstBucket, dstName);
            return toJson(o);
        }
    }

    synchronized JsonObject get(String bucketName, String name, Long generation, Preconditions pre) {
        StoredObject o = live(bucketName, name, generation);
        pre.check(o);
        return toJson(o);
    }

    /** The content of an object and its metadata, for a media download. */
    record Media(byte[] content, JsonObject object) {
    }

    synchronized Media media(String bucketName, String name, Long generation, Preconditions pre) {
        StoredObject o = live(bucketName, name, generation);
        pre.check(o);
        return new Media(o.content, toJson(o)); // the content array is never written after creation
    }

    /** PATCH merges the given fields ({@code metadata} per key; a null key removes it); PUT ({@code replace}) replaces them. */
    synchronized JsonObject update(String bucketName, String name, Long generation, JsonObject body, boolean replace,
                                   Preconditions pre) {
        StoredObject o = live(bucketName, name, generation);
        pre.check(o);
        checkWriteRate(o.bucket, o.name);
        JsonObject incoming = writable(body);
        if (replace) {
            o.fields = removeNulls(incoming);
        } else {
            for (Map.Entry<String, JsonElement> e : incoming.entrySet()) {
                if (e.getKey().equals("metadata") && e.getValue().isJsonObject()) {
                    JsonObject merged = o.fields.has("metadata") ? o.fields.getAsJsonObject("metadata") : new JsonObject();
                    for (Map.Entry<String, JsonElement> m : e.getValue().getAsJsonObject().entrySet()) {
                        if (m.getValue().isJsonNull()) {
                            merged.remove(m.getKey());
                        } else {
                            merged.add(m.getKey(), m.getValue());
                        }
                    }
                    o.fields.add("metadata", merged);
                } else if (e.getValue().isJsonNull()) {
                    o.fields.remove(e.getKey());
                } else {
                    o.fields.add(e.getKey(), e.getValue());
                }
            }
        }
        o.metageneration++;
        o.updated = now();
        touchWrite(o.bucket, o.name);
        return toJson(o);
    }

    synchronized void delete(String bucketName, String name, Long generation, Preconditions pre) {
        StoredObject o = live(bucketName, name, generation);
        pre.check(o);
        checkWriteRate(o.bucket, o.name);
        bucket(bucketName).objects.remove(name);
        touchWrite(bucketName, name);
    }

    /** One page of {@code objects.list}; see {@link ListQuery}. */
    synchronized JsonObject list(String bucketName, ListQuery query, boolean allVersions) {
        Bucket b = bucket(bucketName);
        if (allVersions && isVersioned(b)) {
            // Noncurrent generations are not kept, so listing them would silently miss objects.
            throw new GcsError(501, "notImplemented", "The gcslock emulator does not keep noncurrent object "
                    + "versions: versions=true is not implemented on bucket " + bucketName + ", which has versioning on.");
        }
        return query.run(b.objects, this::toJson);
    }

    private static boolean isVersioned(Bucket b) {
        JsonElement v = b.resource.get("versioning");
        return v != null && v.isJsonObject() && v.getAsJsonObject().has("enabled")
                && v.getAsJsonObject().get("enabled").getAsBoolean();
    }

    // ---- helpers ----

    private final Map<String, Instant> lastWrite = new ConcurrentHashMap<>();

    private void checkWriteRate(String bucket, String name) {
        // The limit is per object name, whichever generation: a re-create right after a delete counts.
        Duration interval = writeRateInterval.get();
        if (interval == null) {
            return;
        }
        Instant last = lastWrite.get(bucket + "/" + name);
        if (last != null && Duration.between(last, now()).compareTo(interval) < 0) {
            onRateLimited.run();
            throw new GcsError(429, "rateLimitExceeded",
                    "The object exceeded the rate limit for object mutation operations (create, update, and delete).");
        }
    }

    private void touchWrite(String bucket, String name) {
        lastWrite.put(bucket + "/" + name, now());
    }

    private long nextGeneration(Instant now) {
        // Real generations are microsecond timestamps; they must grow for every new object of a name
        // even when the clock stands still or is moved back by a test.
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        lastGeneration = Math.max(lastGeneration + 1, micros);
        return lastGeneration;
    }

    private StoredObject live(String bucketName, String name, Long generation) {
        StoredObject o = bucket(bucketName).objects.get(name);
        if (o == null || (generation != null && generation != o.generation)) {
            throw new GcsError(404, "notFound", "No such object: " + bucketName + "/" + name);
        }
        return o;
    }

    static void validateName(String name) {
        if (name == null || name.isEmpty()) {
            throw new GcsError(400, "required", "Required field 'name' is missing.");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > 1024) {
            throw new GcsError(400, "invalid", "The maximum object length is 1024 characters, but got a name with more.");
        }
        if (name.equals(".") || name.equals("..") || name.indexOf('\r') >= 0 || name.indexOf('\n') >= 0) {
            throw new GcsError(400, "invalid", "Invalid object name: " + name);
        }
    }

    /** Keeps only the fields a client may set. */
    private static JsonObject writable(JsonObject in) {
        JsonObject out = new JsonObject();
        if (in == null) {
            return out;
        }
        for (String key : List.of("contentType", "cacheControl", "contentEncoding", "contentDisposition",
                "contentLanguage", "metadata", "customTime", "temporaryHold", "eventBasedHold")) {
            if (in.has(key)) {
                out.add(key, in.get(key).deepCopy());
            }
        }
        return out;
    }

    private static JsonObject removeNulls(JsonObject in) {
        JsonObject out = new JsonObject();
        for (Map.Entry<String, JsonElement> e : in.entrySet()) {
            if (e.getValue() instanceof JsonNull) {
                continue;
            }
            if (e.getKey().equals("metadata") && e.getValue().isJsonObject()) {
                out.add("metadata", removeNulls(e.getValue().getAsJsonObject()));
            } else {
                out.add(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    private JsonObject toJson(StoredObject o) {
        JsonObject r = new JsonObject();
        r.addProperty("kind", "storage#object");
        r.addProperty("id", o.bucket + "/" + o.name + "/" + o.generation);
        r.addProperty("selfLink", "/storage/v1/b/" + o.bucket + "/o/" + PathCodec.encodeSegment(o.name));
        r.addProperty("mediaLink", "/download/storage/v1/b/" + o.bucket + "/o/" + PathCodec.encodeSegment(o.name)
                + "?generation=" + o.generation + "&alt=media");
        r.addProperty("name", o.name);
        r.addProperty("bucket", o.bucket);
        r.add("generation", new JsonPrimitive(Long.toString(o.generation)));
        r.add("metageneration", new JsonPrimitive(Long.toString(o.metageneration)));
        r.addProperty("contentType", "application/octet-stream");
        r.addProperty("storageClass", "STANDARD");
        r.addProperty("size", Integer.toString(o.content.length));
        if (o.md5 != null) {
            r.addProperty("md5Hash", o.md5);
        }
        if (o.componentCount != null) {
            r.addProperty("componentCount", o.componentCount);
        }
        r.addProperty("crc32c", o.crc32c);
        r.addProperty("etag", Base64.getEncoder().encodeToString(
                (o.generation + "/" + o.metageneration).getBytes(StandardCharsets.UTF_8)));
        r.addProperty("timeCreated", o.timeCreated.toString());
        r.addProperty("updated", o.updated.toString());
        r.addProperty("timeStorageClassUpdated", o.timeCreated.toString());
        for (Map.Entry<String, JsonElement> e : o.fields.entrySet()) {
            r.add(e.getKey(), e.getValue().deepCopy());
        }
        return r;
    }
}
