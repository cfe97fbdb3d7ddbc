package io.github.gcslock;

import io.github.gcslock.EngineExplorerPropertyTest.Fault;
import io.github.gcslock.EngineExplorerPropertyTest.Left;
import io.github.gcslock.test.LoggedRequest;
import io.github.gcslock.test.Operation;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

/**
 * The oracles of {@link EngineExplorerPropertyTest} and {@link EngineInterleavingExplorerTest} held to sequences whose
 * outcome is known: a false find of an explorer is pinned here (deterministically, with the emulator's fault hooks, or
 * a virtual world whose waits pass at once), as a defect it found is pinned in {@link ExplorerFindingsTest}.
 */
class ExplorerOracleTest {

    /**
     * The long run on 2a86f1e (seed 5966467778868733776, world 49) reported {@code objects left in GCS after every
     * registry's close() returned: [gcslock/a lease crashed-10 (never handed out)]} after the steps {@code P1 fault
     * DROP_CREATE_REPLY, an object of 'a' left behind: GARBAGE_TTL, ...}. That object was the explorer's own: the
     * lost create reply is a fault of the whole emulator, so it hit the next create, the explorer's write of a
     * crashed writer's object; the create committed, the client's retry met 412, and the explorer took the name for
     * held by someone else and did not record its object as left behind. No registry ever wrote it (its owner is
     * {@code crashed-P9}, its TTL not a number, so it stays for good): no engine defect.
     */
    @Test
    void anObjectTheExplorerLeftBehindWhoseCreateReplyWasLostIsNoLeftover() {
        EngineExplorerPropertyTest explorer = new EngineExplorerPropertyTest();
        EngineExplorerPropertyTest.World w = explorer.new World(1_000_001); // odd: a world with faults, no write limit
        try {
            assertThat(w.clean).isFalse();
            w.fault(1, Fault.DROP_CREATE_REPLY);
            w.leave(1, "a", Left.GARBAGE_TTL);
            assertThat(w.object("a")).as("the explorer's create committed though its reply was lost").isNotNull();
            assertThat(w.object("a").getMetadata()).containsEntry("gcslock-owner", "crashed-P9");
            assertThatCode(w::finish).doesNotThrowAnyException();
            assertThat(w.leftBehind).as("recorded as left behind, as a create whose reply came back is").hasSize(1);
        } finally {
            w.dispose();
        }
    }

    /**
     * {@link WireOracle#checkOwnCreates} (rule 3, the API explorer's aimed fault CREATE_REPLY_LOST_IN_A_CUT_OFF and the
     * lost create replies) on request logs whose verdict is known. A wait whose create committed with its reply lost and
     * whose read found that object ours 700 ms after it reached GCS (the refresh interval is 300 ms): confirmed by a PATCH
     * before the hand-out, no find; handed out without one, a find; deleted as a leak and created again, a find. Found
     * ours 50 ms after the create (the client's own retry), it needs no PATCH.
     */
    @Test
    void theWireOracleHoldsAnAdoptedCreateOfOurOwnToRule3() {
        String l = "lease-1";
        assertThat(ownCreates(l, new Object[][] {{Operation.INSERT, 10, 200, l}, {Operation.GET, 710, 200, l}, {Operation.PATCH, 720, 200, l}}))
                .as("adopted after 700 ms, confirmed by a PATCH").isEmpty();
        assertThat(ownCreates(l, new Object[][] {{Operation.INSERT, 10, 200, l}, {Operation.GET, 710, 200, l}}))
                .singleElement().asString().contains("without confirming it by a PATCH");
        assertThat(ownCreates(l, new Object[][] {{Operation.INSERT, 10, 200, l}, {Operation.INSERT, 40, 412, null},
                {Operation.GET, 60, 200, l}})).as("adopted at once: no PATCH needed").isEmpty();
        assertThat(ownCreates(l, new Object[][] {{Operation.INSERT, 10, 200, l}, {Operation.INSERT, 40, 412, null},
                {Operation.GET, 60, 200, l}, {Operation.DELETE, 80, 204, l}, {Operation.INSERT, 90, 200, l}}))
                .singleElement().asString().contains("deleted the object its own create had written");
    }

    /** The verdicts of WireOracle.checkOwnCreates on one wait of 'a' (TTL 2 s) that acquired lease {@code leaseId}, given its requests. */
    private static java.util.List<String> ownCreates(String leaseId, Object[][] requests) {
        WireOracle.Call c = new WireOracle.Call(WireOracle.Kind.WAIT, 0, "p0", "P0-0", 0, "a", 2_000, 4_000, false, "a wait of 'a'");
        c.leaseId = leaseId;
        c.ended(true, null);
        c.end = c.start + 2_000 * WireOracle.MS;
        java.util.List<LoggedRequest> log = new java.util.ArrayList<>();
        for (Object[] r : requests) {
            long at = c.start + (int) r[1] * WireOracle.MS;
            java.util.Map<String, String> meta = r[3] == null ? java.util.Map.of() : java.util.Map.of("gcslock-lease", (String) r[3]);
            log.add(new LoggedRequest("p0", (Operation) r[0], "bucket", "gcslock/a", at, at + WireOracle.MS, (int) r[2], false, false,
                    null, 0, meta, null));
        }
        java.util.List<String> found = new java.util.ArrayList<>();
        WireOracle.checkOwnCreates(java.util.List.of(c), log, "gcslock/", ttlMs -> 300, x -> false, found::add);
        return found;
    }

    /**
     * The interleaving explorer's seeds 657573908715828 (hostile programs, untriaged widenings) and -171878615634279
     * (random programs) reported {@code close() of p3 returned with p3's lease ... of 'x' still in the bucket}. A release
     * of that lease had begun on another thread — a loss listener's {@code release()} on a listener thread, a hold-at-least
     * release on the refresher — and the schedule left that thread at its next step (a yield point, which is not bounded
     * in virtual time) for longer than close()'s bound. close() found the release in flight and waited for it its whole
     * bound (then 4 operation timeouts and 2 write windows; now 8 and 4), then gave up with a WARN, as its Javadoc says. No engine defect:
     * the oracle held close() to a release it may give up on; it now does so only when close() returned sooner, as it did
     * already for a {@code release()} running on an application thread. Here: a loss listener's release that has begun
     * and waits for the lease's I/O lock (a refresh in flight) all through close().
     */
    @Test
    void aCloseThatWaitedItsWholeBoundForAListenersReleaseIsNoLeftover() throws Exception {
        EngineInterleavingExplorerTest.Run run = new EngineInterleavingExplorerTest.Run(1, false);
        GcsLockRegistry p1 = run.registry("p1");
        run.world.explore(1, Duration.ofSeconds(1), () -> { }); // no actors: the world ends, its timed waits pass at once
        Lease lease = run.tryAcquire(p1, "x");
        assertThat(lease).isNotNull();
        GcsLease held = (GcsLease) lease;
        // a refresh in flight on another thread, as the release sees it: the release begins, then waits for it (on the
        // closing thread itself the lock would be close()'s own work, which it does not wait for: rule 14)
        java.util.concurrent.CountDownLatch ioTaken = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch refreshMayEnd = new java.util.concurrent.CountDownLatch(1);
        Thread refresh = new Thread(() -> {
            held.lockIo();
            try {
                ioTaken.countDown();
                refreshMayEnd.await(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                held.unlockIo();
            }
        }, "a refresh in flight");
        refresh.start();
        assertThat(ioTaken.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        Thread listener = new Thread(() -> run.releaseInLossListener(p1, lease, false), "a loss listener");
        try {
            listener.start();
            await().atMost(Duration.ofSeconds(30)).until(held::isReleasing);
            long closing = run.world.nanoTime();
            run.closeAfter(p1, Duration.ZERO);
            assertThat(run.world.nanoTime() - closing).as("close() waited its whole bound for the release in flight")
                    .isGreaterThanOrEqualTo(EngineInterleavingExplorerTest.RELEASE_BOUND.toNanos());
            assertThat(run.bucket.peek("gcslock/x")).as("the listener's release is still running").isNotNull();
            assertThat(run.violations).isEmpty();
        } finally {
            refreshMayEnd.countDown();
            refresh.join(30_000);
            listener.join(30_000);
            run.registries.forEach(GcsLockRegistry::close);
        }
        assertThat(run.bucket.peek("gcslock/x")).as("the listener's release ended with its object deleted").isNull();
    }

    /**
     * The untriaged find of the acquireStarted/acquireFinished count (seed -1812807406405883 of the hostile programs
     * under faults: {@code p2's recording listener was told acquireStarted of 'y' 3 times and acquireFinished 2 times}),
     * triaged as the oracle: once every actor is done the world no longer moves time, so a listener's own call (the
     * explorer's {@code acquireInListener}) that waits on it — the write window after its own release, rule 21 — has
     * told {@code acquireStarted} and not yet {@code acquireFinished} when the final checks count. Such a call, still in
     * flight, is no call left unfinished; one that has returned is.
     */
    @Test
    void aListenersOwnCallStillInFlightWhenTheRunEndsIsNoCallLeftUnfinished() {
        EngineInterleavingExplorerTest.Run run = new EngineInterleavingExplorerTest.Run(1, false);
        GcsLockRegistry p1 = run.registry("p1");
        run.world.explore(1, Duration.ofSeconds(1), () -> { }); // no actors: the world ends, its timed waits pass at once
        try {
            run.enter(p1, "y"); // a listener's call of 'y', announced, still running
            run.events.get(p1).acquireStarted("y", AcquireMode.TRY);
            run.checkEveryCallToldFinished();
            assertThat(run.violations).as("a call still in flight").isEmpty();

            run.leave(p1, "y"); // it returned without telling acquireFinished
            run.checkEveryCallToldFinished();
            assertThat(run.violations).singleElement().asString()
                    .startsWith("p1's recording listener was told acquireStarted of 'y' 1 times and acquireFinished 0 times");
        } finally {
            run.registries.forEach(GcsLockRegistry::close);
        }
    }

    /**
     * The bounded-stall check ({@code EngineInterleavingExplorerTest.Run#checkWaitCycles}, rule 14) on a wait-for graph
     * whose answer is known: a thread holding a lock waits (a timed wait of the world) for a latch that only a second
     * thread counts down, once it has that lock (a second later) — a cycle, reported while the wait runs, and the wait
     * sits out its whole bound; the same without the lock (the second thread counts down a second later) is no cycle.
     */
    @Test
    void theWaitForGraphFindsAWaitForWorkBlockedOnALockOfTheWaitingThread() {
        assertThat(waitCycles(true)).as("a wait for work blocked on the waiter's lock").isNotEmpty()
                .allMatch(c -> c.startsWith("actor-waiter waits for the test's latch (actor-worker), actor-worker is blocked on")
                        && c.endsWith("held by actor-waiter"));
        assertThat(waitCycles(false)).as("the worker does not need the waiter's lock").isEmpty();
    }

    private static java.util.List<String> waitCycles(boolean workerTakesTheLock) {
        VirtualWorld world = new VirtualWorld(7, false, Duration.ofSeconds(1));
        java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        java.util.List<String> found = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean gaveUp = new java.util.concurrent.atomic.AtomicBoolean();
        world.actor("waiter", () -> {
            lock.lock();
            try {
                gaveUp.set(!world.await(done, Duration.ofSeconds(30).toNanos()));
            } finally {
                lock.unlock();
            }
        });
        world.actor("worker", () -> {
            world.sleepVirtual(Duration.ofSeconds(1)); // every actor starts at time 0: the waiter holds the lock by then
            if (workerTakesTheLock) {
                lock.lock();
                lock.unlock();
            }
            done.countDown();
        });
        world.latchEnders = l -> l != done ? null : new VirtualWorld.Enders("the test's latch", world.actors().stream()
                .filter(a -> a.name.equals("worker") && a.thread != null).map(a -> a.thread)
                .collect(java.util.stream.Collectors.toSet()));
        world.explore(1_000, Duration.ofSeconds(60), () -> found.addAll(world.waitCycles()));
        assertThat(gaveUp.get()).as("the waiter sat out its whole bound").isEqualTo(workerTakesTheLock);
        return found;
    }
}
