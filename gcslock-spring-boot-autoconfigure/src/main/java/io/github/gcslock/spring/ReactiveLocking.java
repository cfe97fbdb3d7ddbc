package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.github.gcslock.LockOwner;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@code @GcsLocked} on methods returning a Reactor {@link Mono} or {@link Flux}: the lock is taken when the
 * result is subscribed to, the method is invoked then (once per subscription, as Spring's reactive
 * transactions do), and the lock is held until the publisher completes, fails or is cancelled.
 * Taking and giving back the lock are GCS requests (and {@code WAIT} may wait long), so both run on
 * {@link Schedulers#boundedElastic()}, never on the subscriber's thread (an event loop, typically).
 * The lease is in the subscriber context under {@code Lease.class}.
 *
 * <p>Each subscription is one invocation ({@link LockOwner#newInvocation}): its hold is never entered by the
 * pooled thread that happened to take it, by another call, or by a second subscription to the same returned
 * publisher — those find the lock held (SKIP: empty, FAIL: error, WAIT: they wait). A {@code @GcsLocked} call
 * made <em>inside</em> the chain of a subscription that holds the name (its publisher subscribed within the
 * holder's, so the holder's Reactor {@code Context} reaches it) is a reentrant hold of that invocation: it
 * cannot outlive the outer hold, whose release waits for the inner publisher to terminate, and the lease is
 * released only when the last hold is given back.
 *
 * <p>Only loaded when Reactor is on the class path.
 */
final class ReactiveLocking {

    /** Context key: the owner of each lock name held by the subscriptions this chain runs inside (an immutable map). */
    private static final Object OWNERS = ReactiveLocking.class.getName() + ".owners";

    private ReactiveLocking() {
    }

    /** Whether a method declared to return {@code type} is handled here. */
    static boolean handles(Class<?> type) {
        return type == Mono.class || type == Flux.class;
    }

    /** What a skipped call returns: an empty publisher of the declared kind. */
    static Object empty(Class<?> type) {
        return type == Flux.class ? Flux.empty() : Mono.empty();
    }

    /**
     * The publisher the caller gets.
     *
     * @param type    {@code Mono.class} or {@code Flux.class}
     * @param name    the lock name of this call
     * @param method  what is locked (the method), naming each subscription's owner
     * @param acquire takes the lock for the owner given (blocking); null when the call is skipped (the result is then empty)
     * @param leaseOf the lease of what {@code acquire} returned
     * @param invoke  invokes the method (once per subscription) and returns its publisher
     * @param release gives the lock back (blocking)
     */
    static <H> Object lockFor(Class<?> type, String name, String method, Function<LockOwner, H> acquire,
                              Function<H, Lease> leaseOf, Callable<Object> invoke, Consumer<H> release) {
        Function<Attempt<H>, Mono<Void>> giveBack = a -> Mono.<Void>fromRunnable(() -> release.accept(a.resource))
                .subscribeOn(Schedulers.boundedElastic());
        // Once per subscription: its owner is the enclosing holder of this name (a nested call, reentrant) or new.
        Mono<Attempt<H>> held = Mono.deferContextual(ctx -> {
            Attempt<H> attempt = new Attempt<>(ownerIn(ctx, name, method));
            return Mono.fromCallable(() -> attempt.acquired(acquire.apply(attempt.owner), release))
                    .subscribeOn(Schedulers.boundedElastic())
                    .doOnCancel(() -> attempt.cancelled(release));
        });
        if (type == Flux.class) {
            return Flux.usingWhen(held,
                    a -> a.adopt() ? Flux.defer(() -> Flux.from(publisher(invoke)))
                            .contextWrite(ctx -> holding(ctx, name, a.owner, leaseOf.apply(a.resource))) : Flux.empty(),
                    giveBack, (a, error) -> giveBack.apply(a), giveBack);
        }
        return Mono.usingWhen(held,
                a -> a.adopt() ? Mono.defer(() -> Mono.from(publisher(invoke)))
                        .contextWrite(ctx -> holding(ctx, name, a.owner, leaseOf.apply(a.resource))) : Mono.empty(),
                giveBack, (a, error) -> giveBack.apply(a), giveBack);
    }

    /** The owner of a subscription for {@code name}: the holder of the name this chain runs inside, or a new invocation. */
    private static LockOwner ownerIn(ContextView ctx, String name, String method) {
        Map<String, LockOwner> owners = ctx.getOrDefault(OWNERS, Map.of());
        LockOwner enclosing = owners.get(name);
        return enclosing != null ? enclosing : LockOwner.newInvocation(method);
    }

    /** The context of the method's publisher: its lease, and {@code owner} as the holder of {@code name}. */
    private static Context holding(Context ctx, String name, LockOwner owner, Lease lease) {
        Map<String, LockOwner> owners = new HashMap<>(ctx.getOrDefault(OWNERS, Map.of()));
        owners.put(name, owner);
        return ctx.put(Lease.class, lease).put(OWNERS, Map.copyOf(owners));
    }

    /**
     * One subscription's acquisition. A subscriber may cancel while the lock is being taken (WAIT can wait
     * long; a GCS call in flight finishes regardless): the lock taken then must be given back, never kept.
     * Who gives it back is decided under this object's monitor: the acquisition itself (cancelled before
     * it finished), the cancel (finished but not yet adopted), or usingWhen's own cleanup (adopted).
     */
    private static final class Attempt<H> {
        /** Who the hold of this subscription belongs to. */
        final LockOwner owner;
        H resource;
        private boolean cancelled;
        private boolean adopted;

        Attempt(LockOwner owner) {
            this.owner = owner;
        }

        /** The acquisition finished: null (skipped) or this attempt, unless the subscriber already left. */
        synchronized Attempt<H> acquired(H h, Consumer<H> release) {
            if (h == null) {
                return null;
            }
            if (cancelled) {
                release.accept(h);
                return null;
            }
            resource = h;
            return this;
        }

        synchronized void cancelled(Consumer<H> release) {
            cancelled = true;
            if (resource != null && !adopted) {
                release.accept(resource);
            }
        }

        /** usingWhen takes the resource over (and releases it when done); false if the cancel already gave it back. */
        synchronized boolean adopt() {
            if (cancelled) {
                return false;
            }
            adopted = true;
            return true;
        }
    }

    private static Publisher<?> publisher(Callable<Object> invoke) {
        Object result;
        try {
            result = invoke.call();
        } catch (Exception e) {
            return Mono.error(e);
        }
        return result == null ? Mono.empty() : (Publisher<?>) result;
    }
}
