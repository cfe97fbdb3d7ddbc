package io.github.gcslock.spring;

import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import io.github.gcslock.GcsLockException;
import io.github.gcslock.GcsLockRegistry;
import io.github.gcslock.RequestOutcome;
import io.github.gcslock.test.ClientFaults;
import io.github.gcslock.test.GcsEmulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The {@code gcsLock} health ({@link GcsReachability}) follows the order in which requests were SENT, not the order
 * in which their outcomes are TOLD. Each lock's events (and a listing's) reach a listener on a channel of its own
 * (DESIGN.md rule 20), and an outcome is known only once its reply came or its timeout ran out, so outcomes are told
 * out of order, most of all at load. Each outcome carries its request's place in one JVM-wide sequence, taken as the
 * request is sent ({@link RequestOutcome#sequence()}); the health is that of the latest-sent request whose outcome is
 * known. The interleavings (E, L: an earlier- and a later-sent request; "cut": the client is cut off GCS):
 * <ol>
 *   <li><b>An answer told late</b> ({@link #anAnswerToldAfterALaterFailureOfAnotherLockLeavesTheHealthDown}): E
 *       answered before the cut, its telling held up (a loaded listener thread); cut; L fails (DOWN); E's answer is
 *       told: DOWN stays. Before the stamp the health followed the telling and said UP while every request failed.</li>
 *   <li><b>Two in flight, the later-sent answered first</b>
 *       ({@link #aTimeoutToldAfterALaterRequestWasAnsweredLeavesTheHealthUp}): E's reply is slow and outlasts the
 *       operation timeout; L, sent after E, is answered; E's timeout is told last: UP stays (GCS answered a request
 *       sent after E; E's failure is older news). Ordered by when outcomes became known, it would say DOWN, and so
 *       would a health that follows the telling: after an outage each request that was in flight would flip it DOWN
 *       again when it timed out.</li>
 *   <li><b>Sent before the cut, answered after it</b>
 *       ({@link #aSlowReplyOfARequestSentBeforeTheCutLeavesTheHealthDown}): E is processed before the cut and its
 *       reply held back (within E's operation timeout); cut; L fails (DOWN); E's slow reply still arrives and is
 *       told: DOWN stays. GCS was reachable
 *       when E was sent; L, sent later, says what GCS does now. Told the other way round (E's answer before L's
 *       failure) it ends DOWN as well: the outcome does not depend on the telling.</li>
 *   <li><b>Several registries</b> ({@link #theApplicationsOwnRegistryIsOrderedWithTheOthers}): the application's own
 *       registry has sent many requests, the auto-configured one few; an answer of the own registry told late, after
 *       a later failure of the other one: DOWN stays. A counter per registry would compare the own registry's 20th
 *       request with the other's 2nd and say UP: the sequence is JVM-wide.</li>
 *   <li><b>A listing's later pages</b> ({@link #aListingsLaterPageIsOrderedByWhenItWasSent}): page 1 answered, its
 *       telling held up; another lock's request X, sent after page 1, answered (UP); cut; page 2, sent after X, fails:
 *       DOWN, and page 1's answer told late keeps it DOWN. Each page takes its own number when it is sent: one
 *       number for the whole listing (taken when it started) would place page 2's failure before X's answer and say
 *       UP.</li>
 * </ol>
 * In each, a request sent after the last one heals (or, while cut off, fails) decides again. The same rule over every
 * order of telling: {@link ReachabilityOrderPropertyTest}.
 */
class ReachabilityEventOrderTest {

    private static GcsEmulator gcs;

    @BeforeAll
    static void start() {
        gcs = GcsEmulator.start();
        gcs.createBucket("order");
    }

    @AfterAll
    static void stop() {
        gcs.close();
    }

    @AfterEach
    void heal() {
        for (String client : new String[] {"order", "own"}) {
            gcs.faults().client(client).reset();
        }
    }

    /** Holds up the telling of the next outcome that matches {@code which} (on the thread telling it) until let go. */
    static final class HeldUpReachability extends GcsReachability {
        final AtomicReference<Predicate<RequestOutcome>> armed = new AtomicReference<>();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch letGo = new CountDownLatch(1);

        void holdUp(Predicate<RequestOutcome> which) {
            armed.set(which);
        }

        @Override
        public void requestCompleted(RequestOutcome outcome) {
            Predicate<RequestOutcome> which = armed.get();
            if (which != null && which.test(outcome) && armed.compareAndSet(which, null)) {
                entered.countDown();
                try {
                    letGo.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            super.requestCompleted(outcome);
        }
    }

    private static GcsLockRegistry registry(String client, Duration operationTimeout, GcsReachability reachability) {
        return GcsLockRegistry.builder(gcs.storage(client), "order").ttl(Duration.ofSeconds(10))
                .operationTimeout(operationTimeout).listener(reachability).build();
    }

    private static Predicate<RequestOutcome> answerOf(String name) {
        return o -> o.answered() && name.equals(o.name());
    }

    @Test
    void anAnswerToldAfterALaterFailureOfAnotherLockLeavesTheHealthDown() throws Exception {
        ClientFaults faults = gcs.faults().client("order");
        HeldUpReachability reachability = new HeldUpReachability();
        try (GcsLockRegistry registry = registry("order", Duration.ofSeconds(3), reachability)) {
            reachability.holdUp(answerOf("held"));
            Thread early = new Thread(() -> registry.inspect("held"), "early-request"); // answered (404), told late
            early.start();
            assertThat(reachability.entered.await(30, TimeUnit.SECONDS)).as("inspect('held') answered").isTrue();
            faults.partition(ClientFaults.Partition.FAIL);
            try {
                assertThatThrownBy(() -> registry.inspect("probe")).isInstanceOf(GcsLockException.class);
                assertThat(reachability.outage()).as("health once inspect('probe') failed").isPresent();
                reachability.letGo.countDown(); // the answer of the request sent before the cut is told now
                early.join(30_000);
                assertThat(reachability.outage())
                        .as("health while cut off GCS, after the answer of a request sent before the cut was told late")
                        .isPresent();
            } finally {
                reachability.letGo.countDown();
                faults.heal();
            }
            assertThat(registry.inspect("probe")).isEmpty();
            assertThat(reachability.outage()).as("health after a request sent after the failure was answered").isEmpty();
        }
    }

    @Test
    void aTimeoutToldAfterALaterRequestWasAnsweredLeavesTheHealthUp() throws Exception {
        ClientFaults faults = gcs.faults().client("order");
        GcsReachability reachability = new GcsReachability();
        try (GcsLockRegistry registry = registry("order", Duration.ofSeconds(1), reachability)) {
            AtomicReference<Throwable> earlyFailure = new AtomicReference<>();
            long slowed = faults.slowedReplies(); // counted since the emulator started
            faults.slowReplies(1, Duration.ofSeconds(4)); // beyond the operation timeout: the client gives up
            Thread early = new Thread(() -> {
                try {
                    registry.inspect("slow");
                } catch (Throwable e) {
                    earlyFailure.set(e);
                }
            }, "early-request");
            early.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> faults.slowedReplies() > slowed); // E was sent, its reply held
            assertThat(registry.inspect("quick")).isEmpty(); // L, sent after E, answered first
            assertThat(reachability.outage()).as("health after L was answered").isEmpty();
            early.join(30_000);
            assertThat(earlyFailure.get()).as("E, whose reply came after the operation timeout")
                    .isInstanceOf(GcsLockException.class);
            assertThat(reachability.outage())
                    .as("health after E, sent before L (which was answered), timed out and was told last").isEmpty();
        }
    }

    @Test
    void aSlowReplyOfARequestSentBeforeTheCutLeavesTheHealthDown() throws Exception {
        ClientFaults faults = gcs.faults().client("order");
        GcsReachability reachability = new GcsReachability();
        // E waits long for its reply (a long operation timeout); L, on the same client, gives up quickly: so E's
        // reply arrives after L's failure was told.
        try (GcsLockRegistry patient = registry("order", Duration.ofSeconds(20), reachability);
             GcsLockRegistry quick = registry("order", Duration.ofSeconds(1), reachability)) {
            AtomicBoolean earlyAnswered = new AtomicBoolean();
            long slowed = faults.slowedReplies(); // counted since the emulator started
            faults.slowReplies(1, Duration.ofSeconds(5)); // within E's operation timeout: the reply still arrives
            Thread early = new Thread(() -> earlyAnswered.set(patient.inspect("slow").isEmpty()), "early-request");
            early.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> faults.slowedReplies() > slowed); // E processed, reply held
            faults.partition(ClientFaults.Partition.FAIL);
            try {
                assertThatThrownBy(() -> quick.inspect("probe")).isInstanceOf(GcsLockException.class);
                assertThat(early.isAlive()).as("E still waits for its reply when L has failed").isTrue();
                assertThat(reachability.outage()).as("health once L, sent after E, failed").isPresent();
                early.join(30_000);
                assertThat(earlyAnswered).as("E's slow reply arrived").isTrue();
                assertThat(reachability.outage())
                        .as("health while cut off, after the slow reply of a request sent before the cut was told").isPresent();
            } finally {
                faults.heal();
            }
            assertThat(quick.inspect("probe")).isEmpty();
            assertThat(reachability.outage()).as("health after a request sent after the cut was answered").isEmpty();
        }
    }

    @Test
    void theApplicationsOwnRegistryIsOrderedWithTheOthers() throws Exception {
        HeldUpReachability reachability = new HeldUpReachability();
        try (GcsLockRegistry own = registry("own", Duration.ofSeconds(3), reachability);
             GcsLockRegistry auto = registry("order", Duration.ofSeconds(3), reachability)) {
            for (int i = 0; i < 20; i++) {
                own.inspect("warm-" + i); // the own registry has sent many more requests than the other one
            }
            reachability.holdUp(answerOf("held"));
            Thread early = new Thread(() -> own.inspect("held"), "own-request");
            early.start();
            assertThat(reachability.entered.await(30, TimeUnit.SECONDS)).as("own.inspect('held') answered").isTrue();
            gcs.faults().client("own").partition(ClientFaults.Partition.FAIL);
            gcs.faults().client("order").partition(ClientFaults.Partition.FAIL);
            try {
                assertThatThrownBy(() -> auto.inspect("probe")).isInstanceOf(GcsLockException.class);
                assertThat(reachability.outage()).as("health once the other registry's request failed").isPresent();
                reachability.letGo.countDown();
                early.join(30_000);
                assertThat(reachability.outage())
                        .as("health while cut off, after the own registry's answer, sent before the other's failure, was told")
                        .isPresent();
            } finally {
                reachability.letGo.countDown();
            }
        }
    }

    @Test
    void aListingsLaterPageIsOrderedByWhenItWasSent() throws Exception {
        // 1001 objects: a page holds at most 1000 (on GCS and the emulator), so the listing takes two requests.
        gcs.createBucket("pages");
        Storage storage = gcs.storage();
        for (int i = 0; i <= 1000; i++) {
            storage.create(BlobInfo.newBuilder("pages", "gcslock/many-" + i).build());
        }
        ClientFaults faults = gcs.faults().client("order");
        HeldUpReachability reachability = new HeldUpReachability();
        try (GcsLockRegistry registry = GcsLockRegistry.builder(gcs.storage("order"), "pages").ttl(Duration.ofSeconds(10))
                .operationTimeout(Duration.ofSeconds(1)).listener(reachability).build()) {
            reachability.holdUp(o -> o.answered() && o.name() == null); // page 1's answer, told late
            AtomicReference<Throwable> listing = new AtomicReference<>();
            Thread lister = new Thread(() -> {
                try {
                    registry.list();
                } catch (Throwable e) {
                    listing.set(e);
                }
            }, "listing");
            lister.start();
            assertThat(reachability.entered.await(30, TimeUnit.SECONDS)).as("page 1 answered").isTrue();
            try {
                assertThat(registry.inspect("x")).isEmpty(); // X: sent after page 1, before page 2
                assertThat(reachability.outage()).as("health after X was answered").isEmpty();
                faults.partition(ClientFaults.Partition.FAIL);
                reachability.letGo.countDown(); // page 1's answer is told; page 2 is sent, cut off
                lister.join(30_000);
                assertThat(listing.get()).as("the listing, whose page 2 was cut off").isInstanceOf(GcsLockException.class);
                assertThat(reachability.outage())
                        .as("health after page 2, sent after X's answered request, failed").isPresent();
            } finally {
                reachability.letGo.countDown();
                faults.heal();
            }
        }
    }
}
