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
        // A subscriber that cancels while WAIT is still waiting gets nothing, but the wait goes on and may yet
        // take the lock: Reactor then discards the result, and the discard hook gives the lock back.
        @SuppressWarnings("unchecked")
        Mono<H> held = Mono.fromCallable(acquire).subscribeOn(Schedulers.boundedElastic())
                .doOnDiscard(Object.class, h -> release.accept((H) h));
        Function<H, Mono<Void>> giveBack = h -> Mono.<Void>fromRunnable(() -> release.accept(h))
                .subscribeOn(Schedulers.boundedElastic());
        if (type == Flux.class) {
            return Flux.usingWhen(held,
                    h -> Flux.defer(() -> Flux.from(publisher(invoke))).contextWrite(ctx -> ctx.put(Lease.class, leaseOf.apply(h))),
                    giveBack, (h, error) -> giveBack.apply(h), giveBack);
        }
        return Mono.usingWhen(held,
                h -> Mono.defer(() -> Mono.from(publisher(invoke))).contextWrite(ctx -> ctx.put(Lease.class, leaseOf.apply(h))),
                giveBack, (h, error) -> giveBack.apply(h), giveBack);
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
