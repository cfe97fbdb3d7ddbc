package io.github.gcslock;

import com.google.api.gax.paging.Page;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.InMemoryBlobs;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;
import com.google.cloud.NoCredentials;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A GCS bucket in memory with the emulator's semantics for the calls the engine's {@link LockStore} makes (create,
 * get, update, delete, list with prefix and pages): generations (growing microsecond stamps, as the emulator's),
 * metagenerations from 1, {@code ifGenerationMatch} / {@code ifMetagenerationMatch} / {@code doesNotExist}, 404 and
 * 412 as the client reports them (a get or delete of a missing object: null / false), metadata merged by a PATCH
 * (a null value removes its key), {@code timeCreated} / {@code updated} from the given clock. No write-rate limit, no
 * sockets. {@link InMemoryStorageDifferentialTest} holds it to the HTTP emulator.
 *
 * <p>Every request goes through the {@link Gate}: by default it is applied at once; the interleaving explorer parks
 * each one and decides when it is delivered, lost after it was applied, or dropped before.
 */
final class InMemoryStorage {

    /** One request: its kind, the object it is about (null for a list), and a sequence number. */
    record Request(long id, String op, String object) {
        @Override
        public String toString() {
            return op + (object == null ? "" : " " + object) + " #" + id;
        }
    }

    /** Decides how a request is served: {@code apply} runs it against the bucket and returns the client's answer. */
    interface Gate {
        Object serve(Request request, Apply apply) throws StorageException;
    }

    interface Apply {
        Object run() throws StorageException;
    }

    /**
     * Told of every write that committed, under the bucket's lock, with the client that sent it (the name given to
     * {@link #storage(String)}, null for {@link #storage()}) and the object before and after (null: none). The
     * interleaving explorer checks GCS-side promises with it (a takeover deletes only a stale object, rule 5; writes of
     * one process to one object a window apart, rule 21).
     */
    interface Observer {
        void written(String client, String op, Blob before, Blob after);
    }

    /** The client whose request is being served on this thread. */
    private static final ThreadLocal<String> CLIENT = new ThreadLocal<>();

    /** The client (the name given to {@link #storage(String)}) whose request this thread is making; null if none. */
    static String client() {
        return CLIENT.get();
    }
    volatile Observer observer;

    private record Obj(String name, long generation, long metageneration, Instant created, Instant updated,
                       Map<String, String> metadata) {
    }

    /** What {@code getOptions()} answers (a {@link Blob} asks its storage for them); never used to connect. */
    private static final StorageOptions OPTIONS = StorageOptions.newBuilder().setProjectId("in-memory")
            .setCredentials(NoCredentials.getInstance()).setHost("http://in-memory.invalid").build();

    private static final Pattern OPTION = Pattern.compile("key=(\\w+), val=(.*)}}$");

    private final String bucket;
    private final Supplier<Instant> clock;
    private final TreeMap<String, Obj> objects = new TreeMap<>();
    private final AtomicLong requests = new AtomicLong();
    private long lastGeneration;
    /** Microseconds the generations of new objects are set back by ({@link #restoredWithLowerGenerations}). */
    private long generationsBack;
    private final Storage storage;
    volatile Gate gate = (request, apply) -> apply.run();

    InMemoryStorage(String bucket, Supplier<Instant> clock) {
        this.bucket = bucket;
        this.clock = clock;
        this.storage = (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(), new Class<?>[] {Storage.class},
                new Handler());
    }

    /** The client view: a {@link Storage} whose object calls are served by this bucket. */
    Storage storage() {
        return storage;
    }

    /** The view of one client (a process): its writes are told to the {@link Observer} with its name. */
    Storage storage(String client) {
        return (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(), new Class<?>[] {Storage.class},
                (proxy, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return switch (method.getName()) {
                            case "equals" -> proxy == args[0];
                            case "hashCode" -> System.identityHashCode(proxy);
                            default -> "InMemoryStorage[" + bucket + " as " + client + "]";
                        };
                    }
                    String before = CLIENT.get();
                    CLIENT.set(client);
                    try {
                        return method.invoke(storage, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        CLIENT.set(before);
                    }
                });
    }

    private void tell(String op, Obj before, Obj after) {
        Observer o = observer;
        if (o != null) {
            o.written(CLIENT.get(), op, before == null ? null : blob(before), after == null ? null : blob(after));
        }
    }

    /** The live objects' names (for checks; no request). */
    synchronized List<String> names() {
        return new ArrayList<>(objects.keySet());
    }

    /**
     * An administrator's delete of generation {@code generation} of {@code name}, from outside every client: no request,
     * no observer. True if it was there.
     */
    synchronized boolean deleteAsAdministrator(String name, long generation) {
        Obj o = objects.get(name);
        if (o == null || o.generation() != generation) {
            return false;
        }
        objects.remove(name);
        return true;
    }

    /**
     * The bucket emptied and made again, as an administrator restoring it would (a fresh bucket, or a new emulator at the
     * same endpoint whose clock is behind): every object gone, from outside every client, and the generations of new
     * objects {@code back} lower from now on — lower than the ones handed out before (rule 18: the engine reports the
     * regression). Returns the highest generation handed out before.
     */
    synchronized long restoredWithLowerGenerations(java.time.Duration back) {
        objects.clear();
        long before = lastGeneration;
        generationsBack += back.toNanos() / 1_000;
        lastGeneration = 0;
        return before;
    }

    /**
     * Another process's write to {@code name} landing from outside every client (no request, no observer), if its live
     * object is generation {@code generation}: {@code replace} false, the object updated as another writer's patch would
     * (metageneration + 1, updated now, refresh id {@code refresh}); true, deleted and made again by the process
     * {@code owner} and patched up to the same metageneration (a new generation, lease id and refresh id). Returns the
     * object now there, or null if generation {@code generation} was not there.
     */
    synchronized Blob writeAsAnotherProcess(String name, long generation, boolean replace, String owner, String refresh) {
        Obj o = objects.get(name);
        if (o == null || o.generation() != generation) {
            return null;
        }
        Instant now = clock.get();
        Map<String, String> meta = new LinkedHashMap<>(o.metadata());
        meta.put("gcslock-refresh", refresh);
        Obj changed;
        if (replace) {
            long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000 - generationsBack;
            lastGeneration = Math.max(lastGeneration + 1, micros);
            meta.put("gcslock-owner", owner);
            meta.put("gcslock-lease", owner + "-" + lastGeneration);
            changed = new Obj(name, lastGeneration, o.metageneration(), now, now, meta);
        } else {
            changed = new Obj(name, o.generation(), o.metageneration() + 1, o.created(), now, meta);
        }
        objects.put(name, changed);
        return blob(changed);
    }

    /** The live object of {@code name} as the client would get it, or null (for checks; no request). */
    synchronized Blob peek(String name) {
        Obj o = objects.get(name);
        return o == null ? null : blob(o);
    }

    // ------------------------------------------------------------------ the bucket

    private synchronized Blob create(BlobInfo info, Map<String, Long> pre) {
        String name = info.getName();
        check(name, objects.get(name), pre);
        Instant now = clock.get();
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000 - generationsBack;
        lastGeneration = Math.max(lastGeneration + 1, micros);
        Map<String, String> meta = new LinkedHashMap<>();
        if (info.getMetadata() != null) {
            info.getMetadata().forEach((k, v) -> {
                if (v != null) {
                    meta.put(k, v);
                }
            });
        }
        Obj o = new Obj(name, lastGeneration, 1, now, now, meta);
        tell("create", objects.get(name), o);
        objects.put(name, o);
        return blob(o);
    }

    private synchronized Blob get(String name, Map<String, Long> pre) {
        Obj o = objects.get(name);
        if (o == null) {
            return null; // the client answers a 404 with null
        }
        check(name, o, pre);
        return blob(o);
    }

    private synchronized Blob update(BlobInfo change, Map<String, Long> pre) {
        String name = change.getName();
        if (change.getMetadata() == null || change.getMetadata().isEmpty()) {
            return get(name, pre); // the client sends no PATCH for a change of nothing: it reads the object (null if none)
        }
        Obj o = live(name, change.getGeneration());
        check(name, o, pre);
        Map<String, String> meta = new LinkedHashMap<>(o.metadata());
        if (change.getMetadata() != null) {
            change.getMetadata().forEach((k, v) -> {
                if (v == null) {
                    meta.remove(k);
                } else {
                    meta.put(k, v);
                }
            });
        }
        Obj changed = new Obj(name, o.generation(), o.metageneration() + 1, o.created(), clock.get(), meta);
        tell("update", o, changed);
        objects.put(name, changed);
        return blob(changed);
    }

    private synchronized boolean delete(BlobId id, Map<String, Long> pre) {
        Obj o = objects.get(id.getName());
        if (o == null || (id.getGeneration() != null && id.getGeneration() != o.generation())) {
            return false; // the client answers a 404 with false
        }
        check(id.getName(), o, pre);
        tell("delete", o, null);
        objects.remove(id.getName());
        return true;
    }

    /** One page: names under {@code prefix} after {@code token} (the last name of the previous page), at most {@code size}. */
    private synchronized Page<Blob> list(String prefix, int size, String token) {
        List<Blob> items = new ArrayList<>();
        String next = null;
        String from = token != null && token.compareTo(prefix) >= 0 ? token : prefix;
        boolean inclusive = token == null || token.compareTo(prefix) < 0;
        for (Obj o : objects.tailMap(from, inclusive).values()) {
            if (!o.name().startsWith(prefix)) {
                break;
            }
            if (items.size() == size) {
                next = objects.lowerKey(o.name()); // another entry exists: the token names the last one handed out
                break;
            }
            items.add(blob(o));
        }
        return new ListPage(prefix, size, items, next);
    }

    private Obj live(String name, Long generation) {
        Obj o = objects.get(name);
        if (o == null || (generation != null && generation != o.generation())) {
            throw new StorageException(404, "No such object: " + bucket + "/" + name);
        }
        return o;
    }

    /** The emulator's order: ifGenerationMatch (0 = does not exist), then ifMetagenerationMatch (412 on a missing object). */
    private static void check(String name, Obj current, Map<String, Long> pre) {
        long gen = current == null ? 0 : current.generation();
        Long ifGeneration = pre.get("IF_GENERATION_MATCH");
        if (ifGeneration != null && ifGeneration != gen) {
            throw conditionNotMet(name, "ifGenerationMatch");
        }
        Long ifMetageneration = pre.get("IF_METAGENERATION_MATCH");
        if (ifMetageneration != null && (current == null || ifMetageneration != current.metageneration())) {
            throw conditionNotMet(name, "ifMetagenerationMatch");
        }
    }

    private static StorageException conditionNotMet(String name, String which) {
        return new StorageException(412, "At least one of the pre-conditions you specified did not hold: " + which
                + " (" + name + ")");
    }

    private Blob blob(Obj o) {
        return InMemoryBlobs.blob(storage, bucket, o.name(), o.generation(), o.metageneration(), o.created(), o.updated(),
                new LinkedHashMap<>(o.metadata()));
    }

    /** The options' values by key (IF_GENERATION_MATCH, IF_METAGENERATION_MATCH, PREFIX, MAX_RESULTS, PAGE_TOKEN). */
    private static Map<String, String> options(Object[] args, int from) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = from; i < args.length; i++) {
            Object a = args[i];
            Object[] opts = a instanceof Object[] array ? array : new Object[] {a};
            for (Object opt : opts) {
                Matcher m = OPTION.matcher(String.valueOf(opt));
                if (!m.find()) {
                    throw new UnsupportedOperationException("in-memory storage: option " + opt);
                }
                String key = m.group(1);
                String val = m.group(2);
                out.put(key, val);
            }
        }
        return out;
    }

    private static Map<String, Long> preconditions(Map<String, String> options) {
        Map<String, Long> pre = new LinkedHashMap<>();
        options.forEach((k, v) -> {
            switch (k) {
                case "IF_GENERATION_MATCH", "IF_METAGENERATION_MATCH" -> pre.put(k, Long.parseLong(v));
                default -> throw new UnsupportedOperationException("in-memory storage: precondition " + k);
            }
        });
        return pre;
    }

    private Object served(String op, String object, Apply apply) {
        return gate.serve(new Request(requests.incrementAndGet(), op, object), apply);
    }

    private final class Handler implements InvocationHandler {
        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> "InMemoryStorage[" + bucket + "]";
                };
            }
            Object[] a = args == null ? new Object[0] : args;
            Class<?>[] types = method.getParameterTypes();
            switch (method.getName()) {
                case "create":
                    if (types.length >= 1 && types[0] == BlobInfo.class
                            && (types.length == 2 || (types.length == 3 && types[1] == byte[].class))) {
                        BlobInfo info = (BlobInfo) a[0];
                        Map<String, Long> pre = preconditions(options(a, types.length == 2 ? 1 : 2));
                        return served("create", info.getName(), () -> create(info, pre));
                    }
                    break;
                case "get":
                    if (types.length >= 1 && types[0] == BlobId.class) {
                        BlobId id = (BlobId) a[0];
                        Map<String, Long> pre = preconditions(options(a, 1));
                        return served("get", id.getName(), () -> get(id.getName(), pre));
                    }
                    break;
                case "update":
                    if (types.length >= 1 && types[0] == BlobInfo.class) {
                        BlobInfo change = (BlobInfo) a[0];
                        Map<String, Long> pre = preconditions(options(a, 1));
                        return served("update", change.getName(), () -> update(change, pre));
                    }
                    break;
                case "delete":
                    if (types.length >= 1 && types[0] == BlobId.class) {
                        BlobId id = (BlobId) a[0];
                        Map<String, Long> pre = preconditions(options(a, 1));
                        return served("delete", id.getName(), () -> delete(id, pre));
                    }
                    break;
                case "getOptions":
                    return OPTIONS; // a Blob keeps its storage's options; no request
                case "list":
                    if (types.length == 2 && types[0] == String.class) {
                        Map<String, String> o = options(a, 1);
                        String prefix = o.getOrDefault("PREFIX", "");
                        int size = Integer.parseInt(o.getOrDefault("MAX_RESULTS", "1000"));
                        String token = o.get("PAGE_TOKEN");
                        return served("list", null, () -> list(prefix, size, token));
                    }
                    break;
                default:
                    break;
            }
            throw new UnsupportedOperationException("in-memory storage: " + method);
        }
    }

    /** A page of a listing; the next page is another request. */
    private final class ListPage implements Page<Blob> {
        private final String prefix;
        private final int size;
        private final List<Blob> items;
        private final String next;

        ListPage(String prefix, int size, List<Blob> items, String next) {
            this.prefix = prefix;
            this.size = size;
            this.items = items;
            this.next = next;
        }

        @Override
        public boolean hasNextPage() {
            return next != null;
        }

        @Override
        public String getNextPageToken() {
            return next == null ? "" : next;
        }

        @SuppressWarnings("unchecked")
        @Override
        public Page<Blob> getNextPage() {
            if (next == null) {
                return null;
            }
            return (Page<Blob>) served("list", null, () -> list(prefix, size, next));
        }

        @Override
        public Iterable<Blob> iterateAll() {
            List<Blob> all = new ArrayList<>();
            for (Page<Blob> p = this; p != null; p = p.getNextPage()) {
                p.getValues().forEach(all::add);
            }
            return all;
        }

        @Override
        public Iterable<Blob> getValues() {
            return items;
        }
    }
}
