package io.github.gcslock.test;

import com.google.gson.JsonObject;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The emulator's state: buckets and the live generation of each object ({@link StoredObject}). Every
 * mutation runs under one monitor, so each is atomic with its precondition check, as on GCS. Knows
 * nothing of the wire: {@link ObjectResource} and {@link BucketResource} render what it returns.
 */
final class ObjectStore {

    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final Supplier<Clock> clock;
    private final WriteRateLimit writeRate;
    private long lastGeneration;

    /** {@code clock} answers the emulator's current clock (its offset may change between requests). */
    ObjectStore(Supplier<Clock> clock, WriteRateLimit writeRate) {
        this.clock = clock;
        this.writeRate = writeRate;
    }

    /**
     * A bucket: its settings as the client gave them ({@link BucketResource} renders them), and its live
     * objects by name, in name order.
     */
    record Bucket(String name, JsonObject settings, Instant created, boolean versioned,
                  NavigableMap<String, StoredObject> objects) {
    }

    /** One source of a compose: a name, optionally a generation and an {@code ifGenerationMatch}. */
    record ComposeSource(String name, Long generation, Long ifGenerationMatch) {
    }

    private Instant now() {
        return clock.get().instant();
    }

    // ---- buckets ----

    Bucket createBucket(String name, JsonObject settings) {
        synchronized (this) {
            if (buckets.containsKey(name)) {
                throw new GcsError(409, "conflict", "Your previous request to create the named bucket succeeded and you already own it.");
            }
            Bucket b = new Bucket(name, settings.deepCopy(), now(), BucketResource.isVersioned(settings), new TreeMap<>());
            buckets.put(name, b);
            return b;
        }
    }

    /** Every bucket, by name. */
    List<Bucket> buckets() {
        return buckets.values().stream().sorted(java.util.Comparator.comparing(Bucket::name)).toList();
    }

    Bucket getBucket(String name) {
        return bucket(name);
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

    /** A new generation of {@code name} with {@code content}, if {@code pre} holds. */
    StoredObject insert(String bucketName, String name, ObjectMetadata metadata, byte[] content, Preconditions pre) {
        validateName(name);
        RequestNotes.name(name);
        synchronized (this) {
            Bucket b = bucket(bucketName);
            pre.check(b.objects.get(name));
            return put(b, name, content, null, metadata);
        }
    }

    /**
     * {@code objects.compose}: the sources' contents concatenated into {@code destination} of the same
     * bucket, atomically with the checks of every source and of the destination's preconditions.
     */
    StoredObject compose(String bucketName, String destination, List<ComposeSource> sources, ObjectMetadata metadata,
                         Preconditions pre) {
        validateName(destination);
        if (sources.isEmpty() || sources.size() > 32) {
            throw new GcsError(400, "invalid", "A compose takes 1 to 32 source objects, got " + sources.size() + ".");
        }
        synchronized (this) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int components = 0;
            for (ComposeSource src : sources) {
                StoredObject o = live(bucketName, src.name(), src.generation());
                if (src.ifGenerationMatch() != null && src.ifGenerationMatch() != o.generation()) {
                    throw new GcsError(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.",
                            "ifGenerationMatch of source " + src.name());
                }
                out.writeBytes(o.content());
                components += o.componentCount() == null ? 1 : o.componentCount();
            }
            Bucket b = bucket(bucketName);
            pre.check(b.objects.get(destination));
            return put(b, destination, out.toByteArray(), components, metadata);
        }
    }

    /**
     * {@code objects.rewrite} (and {@code copy}): a new object with the source's content, in one call.
     * The destination's metadata is {@code metadata}, or the source's when none is given, as on GCS.
     */
    StoredObject rewrite(String srcBucket, String srcName, Long srcGeneration, Preconditions srcPre,
                         String dstBucket, String dstName, ObjectMetadata metadata, Preconditions dstPre) {
        validateName(dstName);
        synchronized (this) {
            StoredObject src = live(srcBucket, srcName, srcGeneration);
            srcPre.check(src);
            Bucket b = bucket(dstBucket);
            dstPre.check(b.objects.get(dstName));
            return put(b, dstName, src.content(), src.componentCount(), metadata.isEmpty() ? src.metadata() : metadata);
        }
    }

    /** Stores a new generation of {@code name} (the write-rate limit permitting). Under the monitor. */
    private StoredObject put(Bucket b, String name, byte[] content, Integer componentCount, ObjectMetadata metadata) {
        Instant now = now();
        writeRate.check(b.name, name, now);
        StoredObject o = StoredObject.create(b.name, name, nextGeneration(now), content, componentCount, now, metadata);
        b.objects.put(name, o);
        writeRate.wrote(b.name, name, now);
        RequestNotes.object(o);
        return o;
    }

    /** The live object (of {@code generation}, when given), if {@code pre} holds; its content included. */
    synchronized StoredObject get(String bucketName, String name, Long generation, Preconditions pre) {
        StoredObject o = live(bucketName, name, generation);
        pre.check(o);
        RequestNotes.object(o);
        return o;
    }

    /**
     * Changes the metadata of the live object to what {@code change} makes of it (a PATCH merges, an update
     * replaces); {@code metageneration} and {@code updated} move on, {@code generation} stays.
     */
    synchronized StoredObject update(String bucketName, String name, Long generation, UnaryOperator<ObjectMetadata> change,
                                     Preconditions pre) {
        StoredObject o = live(bucketName, name, generation);
        pre.check(o);
        Instant now = now();
        writeRate.check(bucketName, name, now);
        StoredObject changed = o.withMetadata(change.apply(o.metadata()), now);
        bucket(bucketName).objects.put(name, changed);
        writeRate.wrote(bucketName, name, now);
        RequestNotes.object(changed);
        return changed;
    }

    synchronized void delete(String bucketName, String name, Long generation, Preconditions pre) {
        StoredObject o = live(bucketName, name, generation);
        pre.check(o);
        Instant now = now();
        writeRate.check(bucketName, name, now);
        bucket(bucketName).objects.remove(name);
        writeRate.wrote(bucketName, name, now);
        RequestNotes.object(o);
    }

    /** One page of {@code objects.list}; see {@link ListQuery}. */
    synchronized ListQuery.Page<StoredObject> list(String bucketName, ListQuery query, boolean allVersions) {
        Bucket b = bucket(bucketName);
        if (allVersions && b.versioned) {
            // Noncurrent generations are not kept, so listing them would silently miss objects.
            throw new GcsError(501, "notImplemented", "The gcslock emulator does not keep noncurrent object "
                    + "versions: versions=true is not implemented on bucket " + bucketName + ", which has versioning on.");
        }
        return query.run(b.objects);
    }

    // ---- helpers ----

    private long nextGeneration(Instant now) {
        // Real generations are microsecond timestamps; they must grow for every new object of a name
        // even when the clock stands still or is moved back by a test.
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        lastGeneration = Math.max(lastGeneration + 1, micros);
        return lastGeneration;
    }

    private StoredObject live(String bucketName, String name, Long generation) {
        StoredObject o = bucket(bucketName).objects.get(name);
        if (o == null || (generation != null && generation != o.generation())) {
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
}
