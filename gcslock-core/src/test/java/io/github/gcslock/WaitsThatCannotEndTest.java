package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static io.github.gcslock.TestThreads.awaitUninterruptibly;
import static io.github.gcslock.TestThreads.daemon;
import static io.github.gcslock.TestThreads.nap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rule 14: close() and release() wait, bounded, for work in flight on other threads — but never for work that waits for
 * the calling thread itself (a lock it holds), and never more than one bound in all. Such a wait cannot succeed: the
 * call sat out its whole bound and then gave up (found by a read-only review of the rule-14 changes, issue 29). Each
 * test is one interleaving, driven through the public API, the application's transport ({@link HookedTransport}) and
 * the lease's monitor.
 */
class WaitsThatCannotEndTest extends EmulatorTestBase {

    /** One bound of the registries below: 8 operation timeouts of 500 ms and 4 write windows of 20 ms (rule 14). */
    private static final long BOUND_MS = 4_080;

    /** A registry through {@code transport} with a long TTL (nothing is lost while a test holds a renewal) and one bound of {@link #BOUND_MS}. */
    private GcsLockRegistry registry(HookedTransport transport) {
        return registry(transport.client(gcs), b -> b.ttl(Duration.ofSeconds(60)).refreshInterval(Duration.ofSeconds(10)));
    }

    /**
     * Interleaving: T1 renew(job) holds the lease's I/O lock, its PATCH on the application's transport. T2 close(): its
     * release of job begins and waits for that lock. T1's transport calls job.release(): it finds close()'s release
     * begun, and waited for it (bounded) — a release that waits for T1's lock: T1 sat out the whole bound inside its
     * own renewal. Expected: it returns at once (as close() does on such a thread), and the object goes once the
     * renewal let the lock go.
     */
    @Test
    void aReleaseByTheTransportInsideARenewalDoesNotWaitForAReleaseWaitingForThatRenewal() throws Exception {
        AtomicReference<Thread> armed = new AtomicReference<>();
        AtomicReference<Lease> held = new AtomicReference<>();
        CountDownLatch inRenewal = new CountDownLatch(1);
        CountDownLatch closeCalled = new CountDownLatch(1);
        AtomicLong releaseTookMs = new AtomicLong(-1);
        HookedTransport transport = new HookedTransport();
        transport.hook = (method, url) -> {
            if (HookedTransport.isPatchOf("job", method, url) && armed.compareAndSet(Thread.currentThread(), null)) {
                inRenewal.countDown();
                awaitUninterruptibly(closeCalled, 30);
                nap(500); // close()'s release of job has begun and waits for this renewal's I/O lock
                long t = System.nanoTime();
                held.get().release();
                releaseTookMs.set((System.nanoTime() - t) / 1_000_000);
            }
        };
        GcsLockRegistry r = registry(transport);
        Lease lease = r.tryAcquire("job").orElseThrow();
        held.set(lease);
        CountDownLatch renewed = daemon("renewing", () -> {
            armed.set(Thread.currentThread());
            r.renew(lease, Duration.ofSeconds(50));
        });
        assertThat(inRenewal.await(20, TimeUnit.SECONDS)).as("the renewal's PATCH reached the transport").isTrue();
        CountDownLatch closed = daemon("closing", () -> {
            closeCalled.countDown();
            r.close();
        });
        assertThat(renewed.await(60, TimeUnit.SECONDS) & closed.await(60, TimeUnit.SECONDS)).as("every call returned").isTrue();
        assertThat(object("job")).as("the object once close() returned").isNull();
        // Liveness with the rule: about nothing. Without it: the whole bound (4.08 s).
        assertThat(releaseTookMs.get()).as("release() inside the renewal's transport took %d ms; one bound is %d ms",
                releaseTookMs.get(), BOUND_MS).isBetween(0L, BOUND_MS / 2);
    }

    /**
     * Interleaving: T1 renew(job) holds the lease's I/O lock (its PATCH held on the application's transport), and
     * job's hold-at-least release comes due on the refresher: it begins and waits for that lock. T1's transport calls
     * close() (the first): it waited for the refresher's running tasks, that release among them — which waits for T1.
     * Expected: close() does not sit out its bound; the object goes once the renewal let the lock go.
     */
    @Test
    void aCloseByTheTransportInsideARenewalDoesNotWaitForTheRefreshersReleaseWaitingForThatRenewal() throws Exception {
        AtomicReference<Thread> armed = new AtomicReference<>();
        AtomicReference<GcsLockRegistry> registry = new AtomicReference<>();
        AtomicReference<GcsLease> held = new AtomicReference<>();
        CountDownLatch inRenewal = new CountDownLatch(1);
        AtomicLong closeTookMs = new AtomicLong(-1);
        HookedTransport transport = new HookedTransport();
        transport.hook = (method, url) -> {
            if (HookedTransport.isPatchOf("job", method, url) && armed.compareAndSet(Thread.currentThread(), null)) {
                inRenewal.countDown();
                // the hold-at-least release has come due on the refresher, begun, and waits for this renewal's I/O lock
                await().atMost(Duration.ofSeconds(20)).until(() -> held.get().isReleasing());
                nap(300);
                long t = System.nanoTime();
                registry.get().close();
                closeTookMs.set((System.nanoTime() - t) / 1_000_000);
            }
        };
        GcsLockRegistry r = registry(transport);
        registry.set(r);
        Lease lease = r.tryAcquire("job").orElseThrow();
        held.set((GcsLease) lease);
        CountDownLatch renewed = daemon("renewing", () -> {
            armed.set(Thread.currentThread());
            r.renew(lease, Duration.ofSeconds(50));
        });
        assertThat(inRenewal.await(20, TimeUnit.SECONDS)).as("the renewal's PATCH reached the transport").isTrue();
        r.releaseAfter(lease, Duration.ofMillis(200));
        assertThat(renewed.await(60, TimeUnit.SECONDS)).as("the renewal (with close() inside its transport) returned").isTrue();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(object("job")).isNull());
        // Liveness with the rule: about nothing. Without it: the whole bound (4.08 s).
        assertThat(closeTookMs.get()).as("close() inside the renewal's transport took %d ms; one bound is %d ms",
                closeTookMs.get(), BOUND_MS).isBetween(0L, BOUND_MS / 2);
    }

    /**
     * Interleaving: T1 release() gave the outermost hold back and blocks on the lease's monitor before its release
     * begins (as a loss listener's release() does while the refresher declares the lease lost; here the test holds the
     * monitor). T2 release() waits until T1's release has begun. Past 3/4 of the bound T1 begins, and its release waits
     * for the lease's I/O lock, held by a renewal whose PATCH is held on the application's transport. T2 then waited a
     * second, fresh bound for T1's release to end. Expected (rule 14, the Javadoc's bound): T2 waits one bound in all,
     * and gives up after it.
     */
    @Test
    void aReleaseWaitsForAnotherThreadsReleaseOneBoundInAll() throws Exception {
        AtomicReference<Thread> armed = new AtomicReference<>();
        CountDownLatch inRenewal = new CountDownLatch(1);
        CountDownLatch letRenewalGo = new CountDownLatch(1);
        HookedTransport transport = new HookedTransport();
        transport.hook = (method, url) -> {
            if (HookedTransport.isPatchOf("job", method, url) && armed.compareAndSet(Thread.currentThread(), null)) {
                inRenewal.countDown();
                awaitUninterruptibly(letRenewalGo, 30);
            }
        };
        GcsLockRegistry r = registry(transport);
        Lease lease = r.tryAcquire("job").orElseThrow();
        GcsLease gcsLease = (GcsLease) lease;
        CountDownLatch renewed = daemon("renewing", () -> {
            armed.set(Thread.currentThread());
            r.renew(lease, Duration.ofSeconds(50));
        });
        assertThat(inRenewal.await(20, TimeUnit.SECONDS)).as("the renewal's PATCH reached the transport").isTrue();
        CountDownLatch first;
        CountDownLatch second;
        AtomicLong secondTookMs = new AtomicLong(-1);
        synchronized (gcsLease) { // as the refresher declaring the lease lost holds it
            first = daemon("first-release", lease::release);
            await().atMost(Duration.ofSeconds(20)).until(() -> first.getCount() == 0 || TestThreads.blockedOn(gcsLease));
            assertThat(first.getCount()).as("the first release() waits for the lease's monitor").isEqualTo(1);
            second = daemon("second-release", () -> {
                long t = System.nanoTime();
                lease.release();
                secondTookMs.set((System.nanoTime() - t) / 1_000_000);
            });
            nap(BOUND_MS * 3 / 4);
        }
        // The first release has begun and waits for the renewal's I/O lock, until well past the second's one bound.
        nap(BOUND_MS);
        letRenewalGo.countDown();
        assertThat(second.await(30, TimeUnit.SECONDS) & first.await(30, TimeUnit.SECONDS) & renewed.await(30, TimeUnit.SECONDS))
                .as("every call returned").isTrue();
        assertThat(object("job")).as("the object once the first release() returned").isNull();
        // With the rule: one bound (it gives up, as documented). Without it: 3/4 of a bound + a fresh bound, here until
        // the renewal let go (about 1.75 bounds).
        assertThat(secondTookMs.get()).as("the second release() took %d ms; one bound is %d ms", secondTookMs.get(), BOUND_MS)
                .isBetween(BOUND_MS * 3 / 4, BOUND_MS * 3 / 2);
    }
}
