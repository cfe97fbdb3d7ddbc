package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

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
 * <p>Only loaded when Reactor is on the class path.
 */
final class ReactiveLocking {

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
     * @param acquire takes the lock (blocking); null when the call is skipped (the result is then empty)
     * @param leaseOf the lease of what {@code acquire} returned
     * @param invoke  invokes the method (once per subscription) and returns its publisher
     * @param release gives the lock back (blocking)
     */
    static <H> Object lockFor(Class<?> type, Callable<H> acquire, Function<H, Lease> leaseOf, Callable<Object> invoke,
                              Consumer<H> release) {
        Function<Attempt<H>, Mono<Void>> giveBack = a -> Mono.<Void>fromRunnable(() -> release.accept(a.resource))
                .subscribeOn(Schedulers.boundedElastic());
        Mono<Attempt<H>> held = Mono.defer(() -> {
            Attempt<H> attempt = new Attempt<>();
            return Mono.fromCallable(() -> attempt.acquired(acquire.call(), release))
                    .subscribeOn(Schedulers.boundedElastic())
                    .doOnCancel(() -> attempt.cancelled(release));
        });
        if (type == Flux.class) {
            return Flux.usingWhen(held,
                    a -> a.adopt() ? Flux.defer(() -> Flux.from(publisher(invoke)))
                            .contextWrite(ctx -> ctx.put(Lease.class, leaseOf.apply(a.resource))) : Flux.empty(),
                    giveBack, (a, error) -> giveBack.apply(a), giveBack);
        }
        return Mono.usingWhen(held,
                a -> a.adopt() ? Mono.defer(() -> Mono.from(publisher(invoke)))
                        .contextWrite(ctx -> ctx.put(Lease.class, leaseOf.apply(a.resource))) : Mono.empty(),
                giveBack, (a, error) -> giveBack.apply(a), giveBack);
    }

    /**
     * One subscription's acquisition. A subscriber may cancel while the lock is being taken (WAIT can wait
     * long; a GCS call in flight finishes regardless): the lock taken then must be given back, never kept.
     * Who gives it back is decided under this object's monitor: the acquisition itself (cancelled before
     * it finished), the cancel (finished but not yet adopted), or usingWhen's own cleanup (adopted).
     */
    private static final class Attempt<H> {
        H resource;
        private boolean cancelled;
        private boolean adopted;

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
