package io.github.gcslock.test;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.NoCredentials;
import com.google.cloud.storage.BucketInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-JVM emulator of the part of the Google Cloud Storage JSON API that locks use, driven through
 * the real {@code google-cloud-storage} client over HTTP.
 *
 * <p>Faithful where locks depend on it: {@code generation} grows for every new object of a name,
 * {@code metageneration} starts at 1 and grows on every metadata change, {@code updated} is the
 * emulator's clock (see {@link #clockOffset(Duration)}), the four generation preconditions are checked
 * atomically with the change, and errors have GCS's JSON shape so the client raises
 * {@link com.google.cloud.storage.StorageException} with the right code and reason.
 *
 * <pre>{@code
 * try (GcsEmulator gcs = GcsEmulator.start()) {
 *     gcs.createBucket("locks");
 *     Storage storage = gcs.storage();
 *     ...
 * }
 * }</pre>
 *
 * <p>Also emulated, for an application's other storage code: resumable uploads, listing with
 * {@code delimiter}, offsets and {@code matchGlob}, {@code md5Hash}/{@code crc32c} and {@code x-goog-hash},
 * byte ranges, copy/rewrite and compose. Not emulated (answered with 501 naming what is missing): ACLs/IAM,
 * bucket listing and updates, batch requests, notifications, customer-supplied or KMS keys, the XML API;
 * see the module's README.
 */
public final class GcsEmulator implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GcsEmulator.class);

    private final HttpServer server;
    private final ExecutorService executor;
    private final Faults faults = new Faults();
    private final ObjectStore store;
    private final String endpoint;
    private final JsonApiHandler handler;
    private final Map<String, HttpServer> clientServers = new ConcurrentHashMap<>();
    private volatile Duration writeRateInterval;
    private volatile Duration clockOffset = Duration.ZERO;

    static {
        // Without TCP_NODELAY the JDK server's small replies wait for delayed ACKs (~40 ms on Linux),
        // which would swamp every latency the emulator is asked to inject.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private GcsEmulator(InetAddress address, int port) throws IOException {
        this.store = new ObjectStore(() -> Clock.offset(Clock.systemUTC(), clockOffset),
                new WriteRateLimit(() -> writeRateInterval, faults::countRateLimited));
        this.server = HttpServer.create(new InetSocketAddress(address, port), 256);
        AtomicInteger threads = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "gcs-emulator-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.executor = Executors.newCachedThreadPool(tf);
        server.setExecutor(executor);
        this.handler = new JsonApiHandler(store, faults);
        server.createContext("/", handler);
        server.start();
        // Bound to all interfaces, the emulator is still reachable on loopback from this host.
        String host = address.isAnyLocalAddress() || address.isLoopbackAddress() ? "127.0.0.1"
                : (address instanceof Inet6Address ? "[" + address.getHostAddress() + "]" : address.getHostAddress());
        this.endpoint = "http://" + host + ":" + server.getAddress().getPort();
        log.debug("GCS emulator listening on {}", endpoint);
    }

    /** Starts an emulator on a free loopback port. */
    public static GcsEmulator start() {
        return start(0);
    }

    /** Starts an emulator on {@code port} of the loopback interface (0: any free port). */
    public static GcsEmulator start(int port) {
        return start(InetAddress.getLoopbackAddress(), port);
    }

    /**
     * Starts an emulator on {@code port} (0: any free port) of the interface with {@code address};
     * {@code 0.0.0.0} listens on all interfaces, e.g. inside a container. The emulator has no
     * authentication: bind it beyond loopback only on a network you trust.
     */
    public static GcsEmulator start(InetAddress address, int port) {
        try {
            return new GcsEmulator(address, port);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the GCS emulator on " + address.getHostAddress() + ":" + port, e);
        }
    }

    /** The base URL, e.g. {@code http://127.0.0.1:40123}: give it to {@code StorageOptions.http().setHost(...)}. */
    public String endpoint() {
        return endpoint;
    }

    /** The port the emulator listens on. */
    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * A new client bound to this emulator, with no credentials and the project {@code test-project}.
     * Its retry settings are the client library's defaults, as a user's would be.
     */
    public Storage storage() {
        return options().build().getService();
    }

    /**
     * The base URL of the endpoint of the client named {@code client}: the same emulator (same buckets and
     * objects), listening on a port of its own so that faults can hit this client alone (see
     * {@link Faults#client(String)}). Started on first use; stopped with the emulator.
     */
    public String endpoint(String client) {
        HttpServer s = clientServers.computeIfAbsent(Objects.requireNonNull(client, "client"), this::startClientEndpoint);
        return "http://127.0.0.1:" + s.getAddress().getPort();
    }

    private HttpServer startClientEndpoint(String client) {
        try {
            HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
            s.setExecutor(executor);
            s.createContext("/", handler);
            faults.bindClient(s.getAddress().getPort(), client);
            s.start();
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the emulator endpoint of client " + client, e);
        }
    }

    /**
     * A new client like {@link #storage()} that talks to the endpoint of {@code client}
     * ({@link #endpoint(String)}), so that faults can hit it alone. Clients derived from its options (as a
     * lock engine derives its bounded clients) talk to the same endpoint.
     */
    public Storage storage(String client) {
        return options(client).build().getService();
    }

    /** Client options like {@link #options()} for the endpoint of {@code client}. */
    public StorageOptions.Builder options(String client) {
        return optionsFor(endpoint(client));
    }

    /** Like {@link #storage()}, with other retry settings (e.g. to make a test of retries quick). */
    public Storage storage(RetrySettings retrySettings) {
        return options().setRetrySettings(retrySettings).build().getService();
    }

    /** Client options bound to this emulator, for callers that want to change more. */
    public StorageOptions.Builder options() {
        return optionsFor(endpoint);
    }

    /** Client options for an emulator at {@code endpoint} (another process's, say). */
    public static StorageOptions.Builder optionsFor(String endpoint) {
        return StorageOptions.http()
                .setHost(endpoint)
                .setProjectId("test-project")
                .setCredentials(NoCredentials.getInstance());
    }

    /** Creates a bucket with default settings; fails if it exists. */
    public GcsEmulator createBucket(String name) {
        store.createBucket(name, new JsonObject());
        return this;
    }

    /** Creates a bucket through the client, so settings such as retention or versioning can be given. */
    public GcsEmulator createBucket(BucketInfo info) {
        storage().create(info);
        return this;
    }

    /**
     * Fault injection and request counters. The settings below are not faults: {@link Faults#reset()}
     * leaves them as they are.
     */
    public Faults faults() {
        return faults;
    }

    /**
     * GCS's limit of about one write per second to one object name: with {@code true}, a second write
     * (create, patch, update, delete, compose, rewrite) of one name within a second is answered with 429
     * {@code rateLimitExceeded}, as GCS does; {@code false} (the default) turns the limit off.
     */
    public GcsEmulator writeRateLimit(boolean enabled) {
        return writeRateLimit(enabled ? Duration.ofSeconds(1) : null);
    }

    /**
     * Like {@link #writeRateLimit(boolean)} with another minimum interval between writes of one object name
     * (tests scale GCS's second down); {@code null} turns the limit off. The 429s it answers are counted by
     * {@link Faults#rateLimited()}.
     */
    public GcsEmulator writeRateLimit(Duration minInterval) {
        if (minInterval != null && minInterval.isNegative()) {
            throw new IllegalArgumentException("writeRateLimit needs a minimum interval >= 0 or null, got " + minInterval);
        }
        this.writeRateInterval = minInterval;
        return this;
    }

    /**
     * Shifts the emulator's clock by {@code offset} (default zero): the {@code updated} and
     * {@code timeCreated} it writes, and the microsecond timestamps its generations start from. Takes
     * effect for the next request.
     */
    public GcsEmulator clockOffset(Duration offset) {
        this.clockOffset = Objects.requireNonNull(offset, "offset");
        return this;
    }

    /** Stops the server. Objects are lost. */
    @Override
    public void close() {
        faults.reset(); // releases requests held by a partition
        clientServers.values().forEach(s -> s.stop(0));
        server.stop(0);
        executor.shutdownNow();
        try {
            executor.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
