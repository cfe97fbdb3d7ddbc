package io.github.gcslock.spring;

import io.github.gcslock.LockRegistry;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Releases that the caller does not wait for: a subscriber that cancels (Reactor's {@code take}, {@code next},
 * {@code timeout}, {@code dispose()}) gets its cancel back at once, while the lock is given back on another
 * thread (a GCS request). A call of the same name in this process waits for those releases before it asks for
 * the lock, so that the caller's next call, or the {@code retry} after a {@code timeout}, never finds the hold of
 * its own finished call (it would be skipped or refused). Such a release is pending from the cancel until the
 * subscription holds nothing: also when the cancel comes while the method's own code still runs (the lock is given
 * back once it returned), and when it comes while the release of a completed or failed publisher is under way. A
 * future its caller cancelled (or completed itself) before its lock was given back leaves its release pending from the
 * moment that release begins (the work ended) until it ended. A completed or failed publisher that nobody cancels, and
 * a completed future, give the lock back before their caller sees the end, so they are never pending here.
 */
final class PendingReleases {

    /** How long a call waits for such a release at most (a release's requests are bounded by the registry). */
    private static final Duration BOUND = Duration.ofSeconds(30);
    /** How often a waiting call looks again whether a release it waits for waits for its caller's thread. */
    private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private record Key(LockRegistry registry, String name) {
    }

    /**
     * One release nobody waits for; {@code ownCode} tells the thread that runs its subscription's own code (the
     * method, before it returned its publisher) while it does, else null: the release cannot begin before it returned.
     */
    private record Release(CompletableFuture<Void> done, Supplier<Thread> ownCode) {
    }

    private final ConcurrentHashMap<Key, Set<Release>> pending = new ConcurrentHashMap<>();

    /** A release of {@code name} begins that nobody waits for; complete the result when it ended (any way). */
    CompletableFuture<Void> begin(LockRegistry registry, String name) {
        return begin(registry, name, () -> null);
    }

    /**
     * As {@link #begin(LockRegistry, String)}, for a subscription whose own code may still run: {@code ownCode} tells
     * the thread that runs it while it does (else null).
     */
    CompletableFuture<Void> begin(LockRegistry registry, String name, Supplier<Thread> ownCode) {
        Key key = new Key(registry, name);
        Release release = new Release(new CompletableFuture<>(), ownCode);
        pending.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(release);
        release.done().whenComplete((v, e) -> pending.computeIfPresent(key, (k, set) -> {
            set.remove(release);
            return set.isEmpty() ? null : set;
        }));
        return release.done();
    }

    /** Waits (bounded) for the releases of {@code name} that began before this call. */
    void awaitReleases(LockRegistry registry, String name) throws InterruptedException {
        awaitReleases(registry, name, null);
    }

    /**
     * Waits (bounded) for the releases of {@code name} that began before this call — except, for a call made by
     * {@code madeInside} (a thread inside a hold of the name, else null), a release whose subscription's own code that
     * thread runs and blocks in: it blocks, typically, on this very call (a nested publisher of the name it
     * {@code block()}s on), and that release cannot begin before it returned. (A thread that only sleeps or computes
     * there is waited for: the retry a {@code timeout} fired from the method's own code subscribes.)
     */
    void awaitReleases(LockRegistry registry, String name, Thread madeInside) throws InterruptedException {
        Set<Release> set = pending.get(new Key(registry, name));
        if (set == null) {
            return;
        }
        long deadline = System.nanoTime() + BOUND.toNanos();
        for (Release release : set.toArray(Release[]::new)) {
            while (!release.done().isDone()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return; // the release is the registry's to finish; this call goes on and finds what it finds
                }
                if (madeInside != null && release.ownCode().get() == madeInside && LockSupport.getBlocker(madeInside) != null) {
                    break; // its own code waits (for this call, typically): it cannot end before this call decides
                }
                try {
                    release.done().get(madeInside != null ? Math.min(left, LOOK_NANOS) : left, TimeUnit.NANOSECONDS);
                } catch (ExecutionException e) {
                    return;
                } catch (TimeoutException e) {
                    // look again
                }
            }
        }
    }
}
