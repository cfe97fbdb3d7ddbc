package io.github.gcslock;

import com.google.api.gax.paging.Page;
import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.TransportOptions;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Bucket;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;

import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The only holder of the GCS client: every request the engine sends goes through here, and every object
 * a reply carries feeds the GCS-time estimate here, once (DESIGN.md rule 6 — a reply that did not feed it
 * would silently leave staleness judged on older anchors). The preconditions each request carries are
 * the ones its rule names; the engine parts decide what to send and what a reply means.
 *
 * <p>Two views share one estimate: this one, whose client retries by itself within the operation
 * timeout (rule 15), and {@link #singleTry()}, whose client does not retry at all.
 */
final class LockStore {

    /**
     * Told of the outcome of each request: answered, or failed for a reason that means GCS cannot serve this
     * process now. One place for every path (acquire, refresh, release, inspect, list), so that whatever tracks
     * GCS's reachability (the Spring health) sees every request and nothing that sent none.
     */
    interface RequestOutcomes {
        RequestOutcomes NONE = outcome -> { };

        /**
         * GCS answered a request about lock {@code name} (null: a listing or the bucket), whatever it said, or it got
         * no usable answer (no reply, a timeout, 408, 429, 5xx, 401 or 403); stamped with the JVM-wide sequence taken
         * just before it was sent.
         */
        void completed(RequestOutcome outcome);
    }

    /**
     * Where outcomes go, and when this process's last DELETE of each object ended; one for a store and every view of
     * it (single-try, tighter timeouts).
     */
    private static final class OutcomeSink {
        volatile RequestOutcomes target = RequestOutcomes.NONE;
        /**
         * Per object name, when the last DELETE this store sent to it returned, answered or failed (rule 21: the next
         * create of ours waits out the write window after it). The least recently used are forgotten (names may be
         * per tenant): forgetting costs at most a 429 that the client's retry absorbs, never safety.
         */
        final Map<String, Long> deleteEnded = recentByName();
        /**
         * Per object name, when the last create of ours that may have written it returned: answered with the object,
         * or failed (it may have committed) — not a 412, which wrote nothing. Rule 21: a forced delete of our own
         * object waits out the write window after it, also while the lease it made is not handed out yet (a request
         * listener blocking on the acquiring thread), so not yet among the live leases. Bounded as deleteEnded.
         */
        final Map<String, Long> createEnded = recentByName();

        /** A per-name record that forgets the least recently used names beyond {@link #MAX_DELETES_REMEMBERED}. */
        private static Map<String, Long> recentByName() {
            return java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
                    return size() > MAX_DELETES_REMEMBERED;
                }
            });
        }
    }

    private static final int MAX_DELETES_REMEMBERED = 10_000;

    private final Storage storage;
    private final String bucket;
    private final String prefix;
    private final GcsTimeEstimator gcsTime;
    private final LongSupplier nanoTime;
    private final LockStore singleTry;
    private final Map<Duration, LockStore> tighter = new ConcurrentHashMap<>();
    private final OutcomeSink outcomes;
    /** A storage used as given (tests' in-memory storage): its views share it, no client copy is made. */
    private final boolean asGiven;

    /** {@code storage} and {@code singleTryStorage} are the bounded clients; both are wrapped to report outcomes here. */
    private LockStore(Storage storage, Storage singleTryStorage, String bucket, String prefix, GcsTimeEstimator gcsTime,
            LongSupplier nanoTime, OutcomeSink outcomes) {
        this(storage, singleTryStorage, bucket, prefix, gcsTime, nanoTime, outcomes, false);
    }

    private LockStore(Storage storage, Storage singleTryStorage, String bucket, String prefix, GcsTimeEstimator gcsTime,
            LongSupplier nanoTime, OutcomeSink outcomes, boolean asGiven) {
        this.asGiven = asGiven;
        this.outcomes = outcomes;
        this.storage = (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(), new Class<?>[] {Storage.class},
                new ReportingStorage(storage, singleTryStorage != null));
        this.bucket = bucket;
        this.prefix = prefix;
        this.gcsTime = gcsTime;
        this.nanoTime = nanoTime;
        this.singleTry = singleTryStorage == null ? this
                : new LockStore(singleTryStorage, null, bucket, prefix, gcsTime, nanoTime, outcomes, asGiven);
    }

    /**
     * Internal, for tests: a store that sends every call to {@code given} as it is — no copy of its client, no
     * retries of the client's own (the single-try view is the same storage), one bound for every call
     * ({@link #boundedTo} returns this store): the storage (in memory) bounds and fails its calls itself.
     */
    static LockStore openAsGiven(Storage given, String bucket, String prefix, GcsTimeEstimator gcsTime, LongSupplier nanoTime) {
        return new LockStore(given, given, bucket, prefix, gcsTime, nanoTime, new OutcomeSink(), true);
    }

    /**
     * A store for lock objects {@code prefix + name} in {@code bucket}, talking through a copy of
     * {@code given} whose retries are bounded by {@code operationTimeout} (rule 15).
     */
    static LockStore open(Storage given, Duration operationTimeout, String bucket, String prefix,
            GcsTimeEstimator gcsTime, LongSupplier nanoTime) {
        Storage bounded = boundedStorage(given, operationTimeout);
        return new LockStore(bounded, withoutRetries(bounded), bucket, prefix, gcsTime, nanoTime, new OutcomeSink());
    }

    /** Sends the outcome of every later request of this store and its views to {@code target}. */
    void reportOutcomesTo(RequestOutcomes target) {
        outcomes.target = target;
    }

    /**
     * The same store without the client's own retries, for the attempts of a waiting {@code acquire}: that
     * loop retries with jittered backoff itself, and a herd of clients each retrying 429s after a release
     * would spend many requests for nothing. A create whose reply was lost is adopted on the next attempt
     * (rule 3).
     */
    LockStore singleTry() {
        return singleTry;
    }

    /**
     * The same store (bucket, prefix, estimate) with every call bounded by {@code timeout} instead (rule 15),
     * for a lease whose own TTL is shorter than the registry's: each of its calls must fail well before its
     * deadline so that the next refresh can still run. Cached per timeout (few distinct values).
     */
    LockStore boundedTo(Duration timeout) {
        if (asGiven) {
            return this;
        }
        return tighter.computeIfAbsent(timeout, t -> {
            Storage bounded = boundedStorage(storage, t);
            return new LockStore(bounded, withoutRetries(bounded), bucket, prefix, gcsTime, nanoTime, outcomes);
        });
    }

    /** The estimate of GCS time that every reply of this store feeds (rule 6). */
    GcsTimeEstimator gcsTime() {
        return gcsTime;
    }

    String bucket() {
        return bucket;
    }

    String prefix() {
        return prefix;
    }

    /** The object that holds the lock {@code name}. */
    BlobId id(String name) {
        return BlobId.of(bucket, prefix + name);
    }

    /** Creates {@code object} only if no object of its name exists (rule 2): 412 if one does. */
    Blob create(BlobInfo object) {
        Blob created = storage.create(object,
                LockObject.EMPTY, Storage.BlobTargetOption.doesNotExist());
        observe(created);
        return created;
    }

    /**
     * When the last create this process sent to {@code id}'s object that may have written it returned (answered, or
     * failed: it may have committed), or null if none is remembered (rule 21, see {@link OutcomeSink#createEnded}).
     */
    Long lastCreateEnded(BlobId id) {
        return outcomes.createEnded.get(id.getName());
    }

    /** The current object of {@code id}, or null if there is none. */
    Blob read(BlobId id) {
        Blob current = storage.get(id);
        if (current != null) {
            observe(current);
        }
        return current;
    }

    /**
     * Every lock object under the prefix. Page by page, each page a request of this store's client, so that the
     * outcome of every page is reported like any request (a page fetched by {@code iterateAll()} would go to
     * the unwrapped client: a later page's failure or answer would reach no listener).
     */
    List<Blob> list() {
        List<Blob> blobs = new ArrayList<>();
        Page<Blob> page = storage.list(bucket, Storage.BlobListOption.prefix(prefix));
        while (true) {
            page.getValues().forEach(blobs::add);
            String next = page.hasNextPage() ? page.getNextPageToken() : null;
            if (next == null || next.isEmpty()) {
                break;
            }
            page = storage.list(bucket, Storage.BlobListOption.prefix(prefix), Storage.BlobListOption.pageToken(next));
        }
        blobs.forEach(this::observe);
        return blobs;
    }

    /**
     * A metadata PATCH guarded by generation and metageneration (rules 3 and 7): metagenerations restart at
     * 1 for every new object of a name, so a metageneration alone can match a newer holder's object.
     * 412 if the object changed, 404 if it is gone.
     */
    Blob patch(BlobInfo change, long generation, long metageneration) {
        Blob after = storage.update(change, Storage.BlobTargetOption.generationMatch(generation),
                Storage.BlobTargetOption.metagenerationMatch(metageneration));
        observe(after);
        return after;
    }

    /**
     * A DELETE guarded by generation and metageneration (rule 12): a late release must never delete a
     * newer holder's object, and metagenerations alone restart at 1 for each generation. Throws 412 if the
     * object changed; false if it was already gone.
     */
    boolean delete(BlobId id, long generation, long metageneration) {
        try {
            return storage.delete(id, Storage.BlobSourceOption.generationMatch(generation),
                    Storage.BlobSourceOption.metagenerationMatch(metageneration));
        } finally {
            deleteEnded(id);
        }
    }

    /**
     * Deletes {@code seen} only if it is unchanged since it was read (rule 5): if its holder refreshed, or
     * another contender took it over between our read and this delete, the delete fails. True if this
     * call deleted it.
     */
    boolean deleteIfUnchanged(Blob seen) {
        return deleteIfUnchangedOutcome(seen) == GuardedDelete.DELETED;
    }

    /** What a guarded DELETE of an object we read did (rules 5 and 16: after CHANGED the object is read next). */
    enum GuardedDelete {
        /** It deleted the object. */
        DELETED,
        /** The object was gone already (404): the name is free. */
        GONE,
        /** The object changed since our read (412): refreshed by its holder or taken by someone else. */
        CHANGED
    }

    /** As {@link #deleteIfUnchanged}, telling a name found free (404) from an object that changed (412). */
    GuardedDelete deleteIfUnchangedOutcome(Blob seen) {
        try {
            return storage.delete(seen.getBlobId(), Storage.BlobSourceOption.generationMatch(seen.getGeneration()),
                    Storage.BlobSourceOption.metagenerationMatch(seen.getMetageneration())) ? GuardedDelete.DELETED : GuardedDelete.GONE;
        } catch (StorageException e) {
            if (e.getCode() == 412) {
                return GuardedDelete.CHANGED; // it changed: refreshed by its holder or taken by someone else
            }
            throw e;
        } finally {
            deleteEnded(seen.getBlobId());
        }
    }

    private void deleteEnded(BlobId id) {
        outcomes.deleteEnded.put(id.getName(), nanoTime.getAsLong());
    }

    /**
     * When the last DELETE this process sent to {@code id}'s object through this store or a view of it returned
     * (answered or failed: it may have committed), or null if none is remembered. Rule 21: a write of ours to that
     * object, a new acquisition's create included, waits out the write window after it.
     */
    Long lastDeleteEnded(BlobId id) {
        return outcomes.deleteEnded.get(id.getName());
    }

    /** The bucket's settings (for the start-up check, rule 19), or null if it does not exist. */
    Bucket readBucket() {
        return storage.get(bucket);
    }

    private void observe(Blob b) {
        gcsTime.observe(LockObject.updated(b), nanoTime.getAsLong());
    }

    // ------------------------------------------------------------------ errors

    /** Whether trying again may help: a timeout, a lost connection, a throttle or a server error. */
    static boolean isTransient(StorageException e) {
        int code = e.getCode();
        return code == 0 || code == 408 || code == 429 || code >= 500 || e.isRetryable()
                || e.getCause() instanceof IOException;
    }

    /** The error a caller sees when GCS could not answer for {@code name} (null: for the whole prefix). */
    GcsLockException unavailable(String name, StorageException e) {
        String what = name == null ? "locks under gs://" + bucket + "/" + prefix : "lock '" + name + "'";
        if (isPermissionDenied(e)) {
            return new GcsLockException(name, "permission denied on bucket '" + bucket + "' for " + what
                    + ": the identity needs storage.objects.create, get, update, delete and list (" + e.getMessage() + ")", e);
        }
        return new GcsLockException(name, "could not reach GCS for " + what + ", so it is unknown whether the lock is free: "
                + e.getCode() + " " + e.getMessage(), e);
    }

    /**
     * Rule 15: whether {@code e} ended a call because the calling thread was interrupted (a request or the client's
     * retry wait cut short), not because GCS answered with an error; if so, the thread's interrupt flag is set again.
     */
    static boolean cutShortByInterrupt(StorageException e) {
        if (e.getCode() > 0) {
            return false; // GCS answered
        }
        boolean interrupted = Thread.currentThread().isInterrupted();
        for (Throwable c = e; c != null && !interrupted; c = c.getCause()) {
            interrupted = c instanceof InterruptedException || c instanceof java.nio.channels.ClosedByInterruptException
                    || (c instanceof java.io.InterruptedIOException && !(c instanceof java.net.SocketTimeoutException));
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return interrupted;
    }

    /**
     * A one-shot call cut short by an interrupt (rule 15): reported as an interrupt (the cause an
     * {@link InterruptedException}, whose cause is {@code e}), not as GCS unreachable. The flag is set again.
     */
    static GcsLockException interrupted(String name, StorageException e) {
        InterruptedException interrupt = new InterruptedException("interrupted while asking GCS for lock '" + name + "'");
        interrupt.initCause(e);
        return new GcsLockException(name, "interrupted while asking GCS for lock '" + name + "', so it is unknown whether "
                + "the lock is free (the thread's interrupt flag is set again)", interrupt);
    }

    static boolean isPermissionDenied(StorageException e) {
        return e.getCode() == 401 || e.getCode() == 403;
    }

    // ------------------------------------------------------------------ clients

    /**
     * The given client with its retries bounded to {@code timeout} (rule 15): the client retries
     * conditional requests by itself for up to 50 s by default, which would stall refreshes past the TTL.
     * Same credentials, project and host.
     */
    static Storage boundedStorage(Storage storage, Duration timeout) {
        StorageOptions options = storage.getOptions();
        RetrySettings base = options.getRetrySettings();
        Duration initialDelay = min(Duration.ofMillis(50), timeout.dividedBy(10));
        RetrySettings bounded = base.toBuilder()
                .setTotalTimeoutDuration(timeout)
                .setInitialRetryDelayDuration(initialDelay)
                .setMaxRetryDelayDuration(min(Duration.ofSeconds(2), timeout.dividedBy(4)))
                .setInitialRpcTimeoutDuration(timeout)
                .setMaxRpcTimeoutDuration(timeout)
                .build();
        StorageOptions.Builder b = options.toBuilder().setRetrySettings(bounded);
        TransportOptions transport = options.getTransportOptions();
        if (transport instanceof HttpTransportOptions http) {
            int ms = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            b.setTransportOptions(http.toBuilder().setConnectTimeout(ms).setReadTimeout(ms).build());
        }
        return InterruptTolerantStorage.wrap(b.build().getService());
    }

    private static Storage withoutRetries(Storage bounded) {
        StorageOptions options = bounded.getOptions();
        return InterruptTolerantStorage.wrap(options.toBuilder()
                .setRetrySettings(options.getRetrySettings().toBuilder().setMaxAttempts(1).build()).build().getService());
    }

    /**
     * The client, reporting the outcome of each request to the store's {@link RequestOutcomes}: a 404, 409 or 412
     * (and any other reply) is an answer. No reply, a timeout, 408, 429 and 5xx are failures, and so are 401/403
     * (GCS answers, but refuses every lock request of this identity: the locks are as unusable as in an outage).
     * Except one 429 to a request sent once (the {@link #singleTry()} client): that is GCS's per-object write
     * limit met in ordinary contention (a create just after the holder's refresh), which the wait loop paces
     * itself; counting it would flap the health DOWN and UP on every contended attempt. A 429 that outlasted
     * the client's retries is a failure. An interrupted request reports nothing: the thread is being stopped.
     * Calls that send no request ({@code getOptions}) report nothing.
     */
    private final class ReportingStorage implements InvocationHandler {

        private static final Set<String> REQUESTS = Set.of("create", "get", "list", "update", "delete");

        private final Storage delegate;
        private final boolean retries;

        private ReportingStorage(Storage delegate, boolean retries) {
            this.delegate = delegate;
            this.retries = retries;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                return InterruptTolerantStorage.objectMethod(proxy, method, args, "ReportingStorage", delegate);
            }
            // The request's place in the JVM-wide order of sending, taken as it is sent: its outcome is told later,
            // on a channel of its lock (rule 20), so a listener orders outcomes by this, not by when it is told.
            long sequence = REQUESTS.contains(method.getName()) ? RequestOutcome.nextSequence() : 0;
            Object result;
            try {
                result = method.invoke(delegate, args);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (!(cause instanceof StorageException se412 && se412.getCode() == 412)) {
                    createMayHaveWritten(method, args); // it may have committed
                }
                if (cause instanceof StorageException se && REQUESTS.contains(method.getName())
                        && !Thread.currentThread().isInterrupted()) {
                    String name = lockName(args);
                    int code = se.getCode(); // 0: no HTTP reply at all (connection refused or reset, a timeout)
                    boolean noAnswer = code == 0 || code == 408 || code >= 500 || (code == 429 && retries);
                    if (noAnswer || isPermissionDenied(se)) {
                        outcomes.target.completed(new RequestOutcome(name, sequence, unavailable(name, se)));
                    } else {
                        outcomes.target.completed(new RequestOutcome(name, sequence, null));
                    }
                }
                throw cause;
            }
            createMayHaveWritten(method, args);
            if (REQUESTS.contains(method.getName())) {
                outcomes.target.completed(new RequestOutcome(lockName(args), sequence, null));
            }
            return result;
        }

        /**
         * Notes the end of a create that wrote (or may have written) its object, before its outcome is told: a request
         * listener on the acquiring thread may block there, its lease not handed out yet (rule 21, see
         * {@link OutcomeSink#createEnded}).
         */
        private void createMayHaveWritten(Method method, Object[] args) {
            if (method.getName().equals("create") && args != null && args.length > 0 && args[0] instanceof BlobInfo info) {
                outcomes.createEnded.put(info.getName(), nanoTime.getAsLong());
            }
        }

        /** The lock a request is about, from its object argument; null for a listing or the bucket. */
        private String lockName(Object[] args) {
            String object = null;
            if (args != null && args.length > 0) {
                if (args[0] instanceof BlobId id) {
                    object = id.getName();
                } else if (args[0] instanceof BlobInfo info) {
                    object = info.getName();
                }
            }
            return object != null && object.startsWith(prefix) ? object.substring(prefix.length()) : null;
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
