package io.github.gcslock.spring;

import io.github.gcslock.LockRegistry;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Releases that the caller does not wait for: a subscriber that cancels (Reactor's {@code take}, {@code next},
 * {@code timeout}, {@code dispose()}) gets its cancel back at once, while the lock is given back on another
 * thread (a GCS request). A call of the same name in this process waits for those releases before it asks for
 * the lock, so that the caller's next call, or the {@code retry} after a {@code timeout}, never finds the hold of
 * its own finished call (it would be skipped or refused). Such a release is pending from the cancel until the
 * subscription holds nothing: also when the cancel comes while the method's own code still runs (the lock is given
 * back once it returned), and when it comes while the release of a completed or failed publisher is under way. A
 * completed or failed publisher that nobody cancels, and a completed future, give the lock back before their caller
 * sees the end, so they are never pending here.
 */
final class PendingReleases {

    /** How long a call waits for such a release at most (a release's requests are bounded by the registry). */
    private static final Duration BOUND = Duration.ofSeconds(30);

    private record Key(LockRegistry registry, String name) {
    }

    private final ConcurrentHashMap<Key, Set<CompletableFuture<Void>>> pending = new ConcurrentHashMap<>();

    /** A release of {@code name} begins that nobody waits for; complete the result when it ended (any way). */
    CompletableFuture<Void> begin(LockRegistry registry, String name) {
        Key key = new Key(registry, name);
        CompletableFuture<Void> release = new CompletableFuture<>();
        pending.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(release);
        release.whenComplete((v, e) -> pending.computeIfPresent(key, (k, set) -> {
            set.remove(release);
            return set.isEmpty() ? null : set;
        }));
        return release;
    }

    /** Waits (bounded) for the releases of {@code name} that began before this call. */
    void awaitReleases(LockRegistry registry, String name) throws InterruptedException {
        Set<CompletableFuture<Void>> set = pending.get(new Key(registry, name));
        if (set == null) {
            return;
        }
        long deadline = System.nanoTime() + BOUND.toNanos();
        for (CompletableFuture<Void> release : set.toArray(CompletableFuture[]::new)) {
            try {
                release.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                return; // the release is the registry's to finish; this call goes on and finds what it finds
            }
        }
    }
}
