package io.github.gcslock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** acquireStarted pairs with acquireFinished on the calling thread; reentrant holds report neither. */
class LockEventListenerTest extends EmulatorTestBase {

    private final List<String> events = new CopyOnWriteArrayList<>();

    private final LockEventListener recorder = new LockEventListener() {
        @Override
        public void acquireStarted(String name, AcquireMode mode) {
            events.add("started " + name + " " + mode.label() + " on " + Thread.currentThread().getName());
        }

        @Override
        public void acquireFinished(String name, AcquireOutcome outcome, Duration took) {
            events.add("finished " + name + " " + outcome.label() + " on " + Thread.currentThread().getName());
        }
    };

    @Test
    void everyAcquisitionStartsAndFinishesOnTheCallingThread() throws Exception {
        GcsLockRegistry r = registry(b -> b.listener(recorder));
        String me = Thread.currentThread().getName();
        Lease lease = r.tryAcquire("a").orElseThrow();
        Lease nested = r.acquire("a", Duration.ofSeconds(1)); // reentrant: neither event
        nested.release();
        assertThat(events).containsExactly("started a try on " + me, "finished a acquired on " + me);

        events.clear();
        GcsLockRegistry other = registry(b -> b.listener(recorder));
        assertThat(other.tryAcquire("a")).isEmpty();
        assertThatThrownBy(() -> other.acquire("a", Duration.ofMillis(100))).isInstanceOf(LockNotAcquiredException.class);
        assertThat(events).containsExactly("started a try on " + me, "finished a busy on " + me,
                "started a wait on " + me, "finished a timeout on " + me);
        lease.release();

        events.clear();
        assertThatThrownBy(() -> r.tryAcquire("bad\u0000name")).isInstanceOf(GcsLockConfigurationException.class);
        assertThat(events).as("bad input fails before asking: finished only").containsExactly("finished bad\u0000name error on " + me);
    }
}
