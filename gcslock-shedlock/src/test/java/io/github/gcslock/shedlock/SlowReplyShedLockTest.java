package io.github.gcslock.shedlock;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.test.GcsEmulatorExtension;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The ShedLock provider takes each lock with lockAtMostFor as its own TTL (found by an independent review):
 * a slow create reply must never let two instances run the task, whatever the registry's operation timeout.
 */
class SlowReplyShedLockTest {

    static final String BUCKET = "shedlock";
    static final String NAME = "nightly-job";

    @RegisterExtension
    static final GcsEmulatorExtension gcs = new GcsEmulatorExtension(BUCKET);

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        gcs.faults().reset();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** A registry with the default TTL (5 min) and so the default operation timeout (10 s), on client {@code client}. */
    private GcsLockProvider instance(String client) {
        GcsLockRegistry r = GcsLockRegistry.builder(gcs.emulator().storage(client), BUCKET)
                .writeRateWindow(Duration.ofMillis(20))
                .backoff(Duration.ofMillis(10), Duration.ofMillis(50), 2.0)
                .build();
        closeables.add(r);
        GcsLockProvider p = new GcsLockProvider(r);
        closeables.add(p);
        return p;
    }

    /**
     * Interleaving: instance A asks for the lock with lockAtMostFor 1 s (so the object's TTL is 1 s); GCS
     * commits A's create at t0 but its reply reaches A only at t0 + 2.5 s (inside A's 10 s operation timeout).
     * From t0 + 1 s the object is stale by its own TTL: instance B takes the lock over and starts the task.
     * A's reply arrives; the provider returns a SimpleLock to ShedLock, which runs the task on A as well —
     * two instances run the task at once. (The lease under A's lock is already LOST on return, but the provider
     * never looks at it.)
     *
     * <p>Expected: A's lock() returns empty or fails (A's calls are bounded by its lock's TTL/3, and a lease
     * whose reply arrives past its deadline is never handed out).
     */
    @Test
    void aSlowCreateReplyDoesNotLetTwoInstancesRunTheTask() throws Exception {
        GcsLockProvider a = instance("a");
        GcsLockProvider b = instance("b");

        gcs.faults().client("a").slowReplies(1, Duration.ofMillis(2500));
        CompletableFuture<Optional<SimpleLock>> aResult = CompletableFuture.supplyAsync(
                () -> a.lock(new LockConfiguration(ClockProvider.now(), NAME, Duration.ofSeconds(1), Duration.ZERO)));

        AtomicReference<SimpleLock> bLock = new AtomicReference<>();
        await("instance B to take over the lock whose create reply to A is late")
                .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            b.lock(new LockConfiguration(ClockProvider.now(), NAME, Duration.ofSeconds(30), Duration.ZERO)).ifPresent(bLock::set);
            return bLock.get() != null;
        });
        // B took the lock over (A's object was stale by its 1 s TTL, or A never got it). Whatever A's call
        // returns — empty, a LockException, or a lock — it must not be a lock while B holds one.
        Optional<SimpleLock> aLock = aResult.handle((lock, error) -> error == null ? lock : Optional.<SimpleLock>empty())
                .get(20, TimeUnit.SECONDS);
        assertThat(aLock).as("A's ShedLock lock() returned a lock while B holds it: both instances run the task").isEmpty();
    }
}
