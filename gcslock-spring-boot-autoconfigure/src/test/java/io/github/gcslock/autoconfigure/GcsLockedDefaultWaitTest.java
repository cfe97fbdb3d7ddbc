package io.github.gcslock.autoconfigure;

import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.Lease;
import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.IfLocked;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code gcslock.wait}, bound once with the other properties ({@link GcsLockProperties#defaultWait()}), is the
 * wait of SKIP and FAIL methods without a {@code maxWait}; a method's own {@code maxWait} wins.
 */
class GcsLockedDefaultWaitTest {

    @RegisterExtension
    static final EmulatorFixture gcs = new EmulatorFixture();
    private static GcsLockRegistry otherInstance;

    @BeforeAll
    static void start() {
        // A long TTL: nothing here waits for an expiry, and a loaded machine must not time GCS calls out.
        otherInstance = GcsLockRegistry.builder(gcs.storage(), EmulatorFixture.BUCKET).ttl(Duration.ofSeconds(60)).build();
    }

    @AfterAll
    static void stop() {
        otherInstance.close();
    }

    public static class Jobs {
        @GcsLocked(value = "default-wait", ifLocked = IfLocked.FAIL)
        public String failAfterTheDefaultWait() {
            return "ran";
        }

        @GcsLocked(value = "default-wait", ifLocked = IfLocked.FAIL, maxWait = "0s")
        public String failAtOnce() {
            return "ran";
        }
    }

    @Test
    void aFailMethodWithoutMaxWaitWaitsForGcslockWait() {
        gcs.runner().withPropertyValues("gcslock.wait=300ms", "gcslock.ttl=60s", "gcslock.backoff.initial=10ms",
                "gcslock.backoff.max=50ms").withBean(Jobs.class).run(ctx -> {
            assertThat(ctx.getBean(GcsLockProperties.class).defaultWait()).isEqualTo(Duration.ofMillis(300));
            Jobs jobs = ctx.getBean(Jobs.class);
            try (Lease held = otherInstance.tryAcquire("default-wait").orElseThrow()) {
                assertThatThrownBy(jobs::failAfterTheDefaultWait).isInstanceOfSatisfying(LockNotAcquiredException.class,
                        e -> assertThat(e.waited()).as("waited for gcslock.wait").isEqualTo(Duration.ofMillis(300)));
                assertThatThrownBy(jobs::failAtOnce).isInstanceOfSatisfying(LockNotAcquiredException.class,
                        e -> assertThat(e.waited()).as("its own maxWait wins").isZero());
            }
        });
    }

    @Test
    void withoutGcslockWaitAFailMethodDoesNotWait() {
        gcs.runner().withPropertyValues("gcslock.ttl=60s").withBean(Jobs.class).run(ctx -> {
            try (Lease held = otherInstance.tryAcquire("default-wait").orElseThrow()) {
                assertThatThrownBy(ctx.getBean(Jobs.class)::failAfterTheDefaultWait)
                        .isInstanceOfSatisfying(LockNotAcquiredException.class, e -> assertThat(e.waited()).isZero());
            }
        });
    }
}
