package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.RequestOutcome;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link GcsReachability} over every order of telling: requests sent one after the other (each with the JVM-wide
 * sequence it took when sent), answered or failed, their outcomes told in any order (as the per-lock channels of rule
 * 20 and timeouts deliver them). After each outcome told, the health is that of the latest-sent request told so far:
 * DOWN exactly when that request failed. The interleavings on a real registry and the emulator:
 * {@link ReachabilityEventOrderTest}.
 */
class ReachabilityOrderPropertyTest {

    /** {@code answered.get(i)}: whether the i-th request sent was answered; {@code telling}: the order told. */
    record Run(List<Boolean> answered, List<Integer> telling) {
    }

    @Provide
    Arbitrary<Run> runs() {
        return Arbitraries.of(true, false).list().ofMinSize(1).ofMaxSize(10).flatMap(answered ->
                Arbitraries.shuffle(IntStream.range(0, answered.size()).boxed().toList()).map(order -> new Run(answered, order)));
    }

    @Property(tries = 500)
    void theHealthIsThatOfTheLatestSentRequestToldSoFar(@ForAll("runs") Run run) {
        GcsReachability reachability = new GcsReachability();
        List<RequestOutcome> sent = new ArrayList<>();
        for (int i = 0; i < run.answered().size(); i++) { // sent in this order: increasing sequences
            long sequence = RequestOutcome.nextSequence();
            sent.add(new RequestOutcome("lock-" + i, sequence, run.answered().get(i) ? null : new GcsLockException("lock-" + i, "cut off")));
        }
        List<RequestOutcome> told = new ArrayList<>();
        for (int index : run.telling()) {
            RequestOutcome outcome = sent.get(index);
            reachability.requestCompleted(outcome);
            told.add(outcome);
            RequestOutcome latestSent = told.stream().max(Comparator.comparingLong(RequestOutcome::sequence)).orElseThrow();
            assertThat(reachability.outage().isPresent())
                    .as("health DOWN after telling %s (told so far: %s; the latest sent: %s)", outcome, told, latestSent)
                    .isEqualTo(!latestSent.answered());
        }
    }

    @Example
    void aFailureLearntOutsideTheRegistriesIsPlacedAsSentNow() {
        GcsReachability reachability = new GcsReachability();
        long before = RequestOutcome.nextSequence(); // a request in flight when another LockRegistry's call failed
        reachability.failed(new GcsLockException("job", "another LockRegistry could not reach GCS"));
        assertThat(reachability.outage()).isPresent();
        reachability.requestCompleted(new RequestOutcome("in-flight", before, null));
        assertThat(reachability.outage()).as("after the answer of a request sent before the failure").isPresent();
        reachability.requestCompleted(new RequestOutcome("later", RequestOutcome.nextSequence(), null));
        assertThat(reachability.outage()).as("after the answer of a request sent after the failure").isEmpty();
    }
}
