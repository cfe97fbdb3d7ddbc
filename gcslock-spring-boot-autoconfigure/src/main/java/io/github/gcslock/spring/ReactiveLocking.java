package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.github.gcslock.LockOwner;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

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
    /** Context key: where a subscription's {@link Attempt} is kept for the cancel heard outside usingWhen. */
    private static final Object SUBSCRIPTION = ReactiveLocking.class.getName() + ".subscription";

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
     * @param type     {@code Mono.class} or {@code Flux.class}
     * @param name     the lock name of this call
     * @param method   what is locked (the method), naming each subscription's owner
     * @param selfWait asked on the subscribing thread when the subscription is not nested in a holder of the name:
     *                 the error to signal at once (a WAIT that would wait for a hold of its own thread), or null
     * @param acquireAs takes the lock for the owner given (blocking), told whether that owner is the enclosing holder
     *                 (a nested subscription, reentrant), and the subscribing thread if that thread was inside a hold of
     *                 the name (else null); null when the call is skipped (the result is then empty)
     * @param leaseOf  the lease of what {@code acquire} returned
     * @param invoke   invokes the method (once per subscription) under what {@code acquire} returned and returns its publisher
     * @param release  gives the lock back (blocking)
     * @param pending  begins a release the cancelling subscriber does not wait for (see {@link PendingReleases}),
     *                 given the thread that runs the subscription's own code while it does
     */
    static <H> Object lockFor(Class<?> type, String name, String method, Supplier<RuntimeException> selfWait,
                              Acquire<H> acquireAs, Function<H, Lease> leaseOf, Function<H, Object> invoke,
                              Consumer<H> release, Function<Supplier<Thread>, CompletableFuture<Void>> pending) {
        // (An attempt that failed holds nothing: nothing to give back.)
        Function<Attempt<H>, Mono<Void>> giveBack = a -> a.resource == null ? Mono.<Void>empty()
                : Mono.<Void>fromRunnable(() -> release.accept(a.resource)).subscribeOn(Schedulers.boundedElastic())
                .doFinally(s -> a.over());
        // A cancel returns at once and its release runs on another thread: later calls of the name wait for it.
        Function<Attempt<H>, Mono<Void>> giveBackOnCancel = a -> {
            if (a.resource == null) {
                return Mono.<Void>empty();
            }
            CompletableFuture<Void> released = pending.apply(() -> null);
            return giveBack.apply(a).doFinally(s -> released.complete(null));
        };
        // Once per subscription: its owner is the enclosing holder of this name (a nested call, reentrant) or new.
        Mono<Attempt<H>> held = Mono.deferContextual(ctx -> {
            LockOwner enclosing = enclosingOwner(ctx, name);
            if (enclosing == null) {
                RuntimeException refused = selfWait.get();
                if (refused != null) {
                    return Mono.error(refused);
                }
            }
            Attempt<H> attempt = new Attempt<>(enclosing != null ? enclosing : LockOwner.newInvocation(method));
            ctx.<AtomicReference<Attempt<?>>>getOrEmpty(SUBSCRIPTION).ifPresent(s -> s.set(attempt));
            // (Judged here, on the subscribing thread: the acquisition runs on another. A subscription made in the
            // method's own code of a subscription of the name does not wait for that one's release while that code
            // blocks, on this subscription typically: see PendingReleases#awaitReleases.)
            Thread madeInside = enclosing == null && GcsLocks.inside(name) ? Thread.currentThread() : null;
            Function<LockOwner, H> acquire = owner -> acquireAs.acquire(owner, enclosing != null, madeInside);
            // The acquisition never throws out of the callable: an error raised just as the subscriber leaves would
            // be dropped by subscribeOn, which Reactor logs at ERROR. It travels as the attempt's failure instead,
            // and is signalled only to a subscriber still there: decided under the attempt's monitor when usingWhen
            // takes the attempt over (an error signalled on the way there, after the subscriber left, was dropped).
            return Mono.fromCallable(() -> {
                        if (!attempt.start()) {
                            return null; // cancelled before the acquisition began: nothing to take or give back
                        }
                        try {
                            return attempt.acquired(acquire.apply(attempt.owner), release);
                        } catch (RuntimeException | Error e) {
                            return attempt.failed(e);
                        } finally {
                            attempt.acquisitionEnded();
                        }
                    })
                    .subscribeOn(Schedulers.boundedElastic())
                    .doOnCancel(() -> attempt.cancelled(release, pending));
        });
        // Each subscription's acquisition failure is told at this outer edge only if gcslock has not heard the
        // subscriber leave (decided under the attempt's monitor, as the cancel is heard): usingWhen took the failure
        // over while the subscriber was there, but the subscriber may leave on its way out (a timeout firing), and an
        // error signalled to a subscriber that left is dropped by Reactor, which logs it at ERROR.
        // Each subscription's cancel is heard first outside usingWhen, on the canceller's thread before it signals
        // anything downstream (timeout's error, take's completion, the retry that follows): usingWhen defers a cancel
        // that comes while the method's own code runs (before its publisher is subscribed) and ignores one that comes
        // while a completion's release is under way, and the caller's next call, or the retry, must still wait for
        // this subscription's release (see Attempt#cancelRequested).
        if (type == Flux.class) {
            return Flux.defer(() -> {
                AtomicReference<Attempt<?>> subscription = new AtomicReference<>();
                return Flux.usingWhen(held,
                                a -> !a.adopt() ? Flux.empty() : a.failure != null ? Flux.error(a.failure)
                                        : Flux.defer(() -> Flux.from(publisher(() -> a.ownCode(invoke))))
                                        .contextWrite(ctx -> holding(ctx, name, a.owner, leaseOf.apply(a.resource))),
                                giveBack, (a, error) -> giveBack.apply(a), giveBackOnCancel)
                        .contextWrite(Context.of(SUBSCRIPTION, subscription))
                        .onErrorResume(e -> tells(subscription, e) ? Flux.error(e) : Flux.empty())
                        .doOnCancel(() -> cancelRequested(subscription, pending));
            });
        }
        return Mono.defer(() -> {
            AtomicReference<Attempt<?>> subscription = new AtomicReference<>();
            return Mono.usingWhen(held,
                            a -> !a.adopt() ? Mono.empty() : a.failure != null ? Mono.error(a.failure)
                                    : Mono.defer(() -> Mono.from(publisher(() -> a.ownCode(invoke))))
                                    .contextWrite(ctx -> holding(ctx, name, a.owner, leaseOf.apply(a.resource))),
                            giveBack, (a, error) -> giveBack.apply(a), giveBackOnCancel)
                    .contextWrite(Context.of(SUBSCRIPTION, subscription))
                    .onErrorResume(e -> tells(subscription, e) ? Mono.error(e) : Mono.empty())
                    .doOnCancel(() -> cancelRequested(subscription, pending));
        });
    }

    /** The subscriber of a subscription left: see {@link Attempt#callerLeft}. */
    private static void cancelRequested(AtomicReference<Attempt<?>> subscription,
                                        Function<Supplier<Thread>, CompletableFuture<Void>> pending) {
        Attempt<?> attempt = subscription.get();
        if (attempt != null) {
            attempt.callerLeft(pending);
        }
    }

    /**
     * Whether the error {@code e}, on its way out of a subscription, is signalled to its subscriber: not if it is the
     * subscription's acquisition failure and gcslock heard the subscriber leave first (see {@link Attempt#tells}).
     */
    private static boolean tells(AtomicReference<Attempt<?>> subscription, Throwable e) {
        Attempt<?> attempt = subscription.get();
        return attempt == null || attempt.tells(e);
    }

    /**
     * Whether gcslock signalled the acquisition failure {@code e} to a subscriber before it heard that subscriber leave:
     * the two crossed (a {@code timeout} firing as the lock was refused, typically). Reactor drops such an error,
     * logging it at ERROR, as it drops any publisher's error that meets a cancel on its way; gcslock never signals
     * one after it heard the cancel. For tests, which judge Reactor's dropped errors by this order.
     */
    static boolean signalledBeforeTheSubscriberLeft(Throwable e) {
        return CROSSED.contains(e);
    }

    /** Acquisition failures signalled before gcslock heard their subscriber leave (see above); weakly held. */
    private static final Set<Throwable> CROSSED = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    /** The holder of {@code name} that this chain runs inside (a nested call, reentrant), or null. */
    private static LockOwner enclosingOwner(ContextView ctx, String name) {
        Map<String, LockOwner> owners = ctx.getOrDefault(OWNERS, Map.of());
        return owners.get(name);
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
     * A subscriber that leaves before this subscription holds nothing any more leaves a pending release
     * ({@link PendingReleases}) that ends when it does: later calls of the name wait for it.
     */
    private static final class Attempt<H> {
        /** Who the hold of this subscription belongs to. */
        final LockOwner owner;
        H resource;
        /** Why the acquisition failed (signalled to the subscriber if it is still there). */
        Throwable failure;
        private boolean cancelled;
        /** The subscriber left: heard outside usingWhen, before the cancel reaches the acquisition (see {@link #callerLeft}). */
        private boolean left;
        /** The {@link #failure} went out to the subscriber (see {@link #tells}). */
        private boolean told;
        private boolean adopted;
        private boolean started;
        private boolean acquisitionEnded;
        /** This subscription holds nothing and never will again (nothing taken, or given back). */
        private boolean over;
        /** The pending release that a subscriber who left before {@link #over} leaves behind: ends with it. */
        private CompletableFuture<Void> awaited;
        /** The thread that runs the method's own code under this subscription's lock, while it does. */
        private volatile Thread ownCode;

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

        /** The acquisition begins, unless the subscriber already left. */
        synchronized boolean start() {
            started = !cancelled;
            if (!started) {
                over();
            }
            return started;
        }

        /** The acquisition failed: this attempt carrying the failure, or null if the subscriber already left. */
        synchronized Attempt<H> failed(Throwable e) {
            if (cancelled || left) {
                return null; // nobody to tell, nothing to log (a WAIT interrupted by the cancel, typically)
            }
            failure = e;
            return this;
        }

        /**
         * The subscriber cancelled: an acquisition still running gives back what it takes (a later call of the name
         * waits for that, see {@link PendingReleases}); one that finished but was not adopted is given back now.
         */
        synchronized void cancelled(Consumer<H> release, Function<Supplier<Thread>, CompletableFuture<Void>> pending) {
            cancelled = true;
            if (resource != null && !adopted) {
                release.accept(resource);
                over();
            } else if (resource == null && started && !acquisitionEnded) {
                cancelRequested(pending);
            }
        }

        /**
         * The subscriber left, heard outside usingWhen first, on the canceller's thread — before the cancel reaches
         * usingWhen and this acquisition, which on a loaded machine may be milliseconds later, and after usingWhen took
         * the attempt over never: an acquisition that has not begun never begins (nothing is taken, so the caller's
         * next call, or the retry, finds no hold of this subscription — begun meanwhile, it would take the lock with
         * nobody waiting for its release), and a failure not yet told is told to nobody (a subscriber that left drops
         * it: Reactor's ERROR). Otherwise see {@link #cancelRequested}.
         */
        synchronized void callerLeft(Function<Supplier<Thread>, CompletableFuture<Void>> pending) {
            left = true;
            if (told) {
                CROSSED.add(failure); // signalled before the subscriber left: the two crossed (Reactor may drop it)
            }
            if (!started) {
                cancelled = true;
                over();
                return;
            }
            cancelRequested(pending);
        }

        /**
         * The subscriber left (heard outside usingWhen, first): unless this subscription holds nothing any more, a
         * pending release begins that ends when it does, so that the caller's next call of the name (or its retry) is
         * not refused by this subscription's hold — also when usingWhen defers the cancel (the method's own code still
         * runs) or ignores it (a completion's release is under way).
         */
        synchronized void cancelRequested(Function<Supplier<Thread>, CompletableFuture<Void>> pending) {
            if (started && !over && awaited == null) {
                awaited = pending.apply(() -> ownCode);
            }
        }

        /**
         * The error {@code e} reaches the outer edge of this subscription: whether it goes on to the subscriber. The
         * method's own errors always do (Reactor drops one that meets a cancel, as for any publisher); this
         * acquisition's failure only if the subscriber has not left — decided here, with {@link #callerLeft}, so that
         * gcslock never signals its failure after it heard the subscriber leave (usingWhen may have taken it over just
         * before: a subscriber that left drops it, which Reactor logs at ERROR).
         */
        synchronized boolean tells(Throwable e) {
            if (e != failure) {
                return true;
            }
            if (left) {
                return false;
            }
            told = true;
            return true;
        }

        /** Invokes the method (its own code, on this thread) under this subscription's lock: returns its publisher. */
        Object ownCode(Function<H, Object> invoke) {
            ownCode = Thread.currentThread();
            try {
                return invoke.apply(resource);
            } finally {
                ownCode = null;
            }
        }

        /** This subscription holds nothing any more: a pending release it left ends. */
        synchronized void over() {
            over = true;
            if (awaited != null) {
                awaited.complete(null);
            }
        }

        /** The acquisition ended (taken and, if cancelled, given back; skipped; or failed). */
        synchronized void acquisitionEnded() {
            acquisitionEnded = true;
            if (resource == null) {
                over();
            }
        }

        /**
         * usingWhen takes the attempt over (releases its resource when done, or signals its failure); false if the
         * subscriber already left (the cancel gave the resource back; a failure is then told to nobody).
         */
        synchronized boolean adopt() {
            if (cancelled || (failure != null && left)) {
                return false;
            }
            adopted = true;
            return true;
        }
    }

    /** Takes the lock of one subscription (blocking). */
    @FunctionalInterface
    interface Acquire<H> {
        /**
         * @param owner      who the hold belongs to
         * @param reentrant  whether {@code owner} is the enclosing holder of the name (a nested subscription)
         * @param madeInside the subscribing thread if it was inside a hold of the name (the method's own code of a
         *                   subscription of the name), else null
         * @return what was taken, or null when the call is skipped
         */
        H acquire(LockOwner owner, boolean reentrant, Thread madeInside);
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
