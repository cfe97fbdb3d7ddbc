package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The reactive holding in isolation: a lock taken after its subscriber left is given back, never kept. */
class ReactiveLockingTest {

    @Test
    void aLockTakenAfterTheSubscriberCancelledIsReleased() throws Exception {
        CountDownLatch acquiring = new CountDownLatch(1);
        CountDownLatch mayFinish = new CountDownLatch(1);
        AtomicInteger released = new AtomicInteger();
        AtomicInteger invoked = new AtomicInteger();
        Object held = new Object();
        @SuppressWarnings("unchecked")
        Mono<String> mono = (Mono<String>) ReactiveLocking.lockFor(Mono.class, "job", "test", () -> null,
                (owner, nested, madeInside) -> {
                    acquiring.countDown();
                    // An acquisition that ignores the interrupt Reactor may send on cancel, as a GCS call in
                    // flight would: it completes after the subscriber is gone.
                    while (true) {
                        try {
                            if (mayFinish.await(10, TimeUnit.SECONDS)) {
                                return held;
                            }
                        } catch (InterruptedException ignored) {
                            // keep going
                        }
                    }
                },
                h -> (Lease) null,
                h -> {
                    invoked.incrementAndGet();
                    return Mono.just("ran");
                },
                h -> released.incrementAndGet(), ownCode -> new java.util.concurrent.CompletableFuture<>());
        Disposable subscription = mono.subscribe();
        assertThat(acquiring.await(5, TimeUnit.SECONDS)).isTrue();
        subscription.dispose();
        mayFinish.countDown();
        await("the lease taken for the subscriber that left to be released")
                .atMost(Duration.ofSeconds(30)).untilAtomic(released, org.hamcrest.Matchers.equalTo(1));
        assertThat(invoked).as("the method does not run for a subscriber that left").hasValue(0);
    }
}
