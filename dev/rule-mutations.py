#!/usr/bin/env python3
# Removes each rule of docs/DESIGN.md from the engine in turn and runs the test that pins it; every line
# must say KILLED. Run from the repository root: python3 dev/rule-mutations.py [label...]
# (builds gcslock-core with the modules it needs from this tree: no './mvnw install' required).
#
# --explorer [--tries N] [--runs M] [--timeout S] [label...]: the catalogue run of issue 29 part 3. Applies each
# mutation (every one of this list: the rules, and the fixes of the review rounds re-introduced) and runs ONLY the
# explorers, never a pinning test: EngineInterleavingExplorerTest (every scenario, M random-seeded schedules each,
# default 20; its methods that pin one mutation are left out), then, if that found nothing,
# EngineExplorerPropertyTest (N jqwik tries, default 4, no shrinking, a fresh random seed). A mutation is FOUND if
# either fails; the line names which, the scenario or try, the time to find (seconds since that explorer started)
# and the violation. An interleaving find is replayed once on the unmutated engine (same seed): if it fails there
# too, the line says FALSE FIND and it does not count. Cheap per mutation: one Maven invocation at the start
# (test-compile with -am, since gcslock-test is never installed, and the test classpath); then per mutation only
# javac of the mutated file(s) into an overlay directory (the tree is restored at once) and one JVM that runs the
# explorers through the JUnit Platform launcher (dev/ExplorerCatalogue.java), stopping at the first find.
# --which interleavings|api: only one of the explorers.
# --control K: K runs on the unmutated engine first (and no mutation unless labels are given).
# Batches: run a few labels per /work/bin/slot call; --prepared skips the Maven step (the classes are current).
# Ledger: every explorer verdict is also written to dev/catalogue/<UTC time>-<pid>.tsv (one file per invocation, so that
# runs on several branches merge without conflicts): time, commit of the tree, label, verdict, explorers, runs, tries,
# detail. Commit those files with the work they measured.
# --check: no run; exit status 1 if a mutation's pattern is no longer in its file (run by .ci/run).
# --summary: no run; the latest verdict per mutation of this list and explorer set from the ledger, FOUND if one set's
# latest is (FALSE FIND and NO RESULT do not count as measured), the kill rate over the measured ones, and the mutations never measured.
# A label selects every mutation whose label contains it; '=<label>' selects only the mutation of exactly that label.
import subprocess, sys, os
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
E='gcslock-core/src/main/java/io/github/gcslock/'
muts = [
 ("adopt own create", E+'AcquireAttempt.java', "if (me.owner().equals(owner) && leaseId.equals(currentLease)) {", "if (false) {", "AlgorithmRulesTest#adoptsItsOwnCreateWhoseReplyWasLost"),
 ("leaked retake", E+'AcquireAttempt.java', "if (me.owner().equals(owner) && !engine.isLive(currentLease)) {", "if (false) {", "AlgorithmRulesTest#retakesALeaseThisProcessLeakedAtOnce"),
 ("stale takeover metageneration precondition", E+'LockStore.java', "return storage.delete(seen.getBlobId(), Storage.BlobSourceOption.generationMatch(seen.getGeneration()),\n                    Storage.BlobSourceOption.metagenerationMatch(seen.getMetageneration())) ?", "return storage.delete(seen.getBlobId(), Storage.BlobSourceOption.generationMatch(seen.getGeneration())) ?", "AlgorithmRulesTest#staleTakeoverDoesNotDeleteALockRefreshedBetweenReadAndDelete"),
 ("stale takeover generation precondition", E+'LockStore.java', "return storage.delete(seen.getBlobId(), Storage.BlobSourceOption.generationMatch(seen.getGeneration()),\n                    Storage.BlobSourceOption.metagenerationMatch(seen.getMetageneration())) ?", "return storage.delete(BlobId.of(seen.getBucket(), seen.getName()), Storage.BlobSourceOption.metagenerationMatch(seen.getMetageneration())) ?", "AlgorithmRulesTest#staleTakeoverDoesNotDeleteANewHoldersObjectWithTheSameMetageneration"),
 ("stale takeover at all", E+'AcquireAttempt.java', "if (seen.stale()) {", "if (false) {", "AlgorithmRulesTest#takesOverALockWhoseHolderStoppedRefreshing"),
 ("release generation precondition", E+'LockStore.java', "return storage.delete(id, Storage.BlobSourceOption.generationMatch(generation),\n                    Storage.BlobSourceOption.metagenerationMatch(metageneration));", "return storage.delete(BlobId.of(id.getBucket(), id.getName()), Storage.BlobSourceOption.metagenerationMatch(metageneration));", "AlgorithmRulesTest#aLateReleaseNeverDeletesTheNextHoldersLock"),
 ("release waits for in-flight refresh", E+'LeaseRelease.java', "lease.lockIo(); // waits", "// lease.lockIo(); // waits", "AlgorithmRulesTest#releaseDuringARefreshStillDeletesTheObject"),
 ("refresh adopt lost reply", E+'LeaseKeeper.java', "&& lease.unconfirmedRefreshes().thatWrote(current) != null) {", "&& false) {", "AlgorithmRulesTest#adoptsItsOwnRefreshWhoseReplyWasLost"),
 ("refresh id check", E+'UnconfirmedRefreshes.java', "byId.get(LockObject.meta(current, LockObject.REFRESH));", "byId.values().stream().findFirst().orElse(null);", "AlgorithmRulesTest#refreshOfALockChangedBySomeoneElseDeclaresItLost"),
 ("refresh 404 lost", E+'LeaseKeeper.java', "if (e.getCode() == 404) {", "if (false) {", "AlgorithmRulesTest#refreshOfADeletedLockDeclaresItLost"),
 ("failure count limit", E+'LeaseKeeper.java', "if (failures >= maxFailures) {", "if (false) {", "AlgorithmRulesTest#consecutiveRefreshFailuresUpToTheLimitLoseTheLease"),
 ("deadline rule lazy", E+'GcsLease.java', "if (engine.nanoTime() - deadlineNanos() >= 0) {", "if (false) {", "AlgorithmRulesTest#aPausedHolderSeesItsLeaseUnhealthyOnItsFirstCheck"),
 ("deadline rule both", E+'GcsLease.java', "long byTtl = lastConfirmedNanos + timing.deadlineSpanNanos();", "long byTtl = lastConfirmedNanos + Long.MAX_VALUE / 4;", "AlgorithmRulesTest#hangingRefreshesLoseTheLeaseBeforeAnyoneCanTakeItOver"),
 ("refresh at all", E+'LeaseKeeper.java', "scheduleRefresh(lease, Math.min(engine.nanoTime(), lease.lastConfirmedNanos()) + (long) (period * share));\n        armDeadline(lease);", "armDeadline(lease);", "AlgorithmRulesTest#aRefreshedLockIsNeverTakenOver"),
 ("drift: GCS-time anchors expire after a window", E+'GcsTimeEstimator.java', ["while (!anchors.isEmpty() && nowNanos - anchors.peekFirst().nanos > windowNanos) {", "            if (now - a.nanos <= window) {"], ["while (!anchors.isEmpty() && nowNanos - anchors.peekFirst().nanos > Long.MAX_VALUE) {", "            if (true) {"], "ClockDriftTest#aContenderWithAFastClockNeverTakesOverALiveLock"),
 ("skew: use local clock for staleness", E+'GcsTimeEstimator.java', "Instant now = lowerBoundWithin(window);", "Instant now = java.time.Instant.now().plusSeconds(120);", "ClockSkewTest"),
 ("rule 21: a forced delete of our own lease waits out the write window", E+'GcsLockRegistry.java', "release.awaitWriteWindowBeforeForcedDelete(name, fencingToken);", "// no wait", "WriteWindowTest#aForcedDeleteOfOurOwnLeaseRightAfterItsCreateWaitsOutTheWindowWithout429"),
 ("local queueing", E+'Acquirer.java', "if (!runtime.tryAcquire(slot.permit, Math.max(0, left))) {", "if (false) {", "GcsLockRegistryTest#otherThreadsOfOneProcessQueueLocallyAndDoNotContendOnGcs"),
 ("reentrancy", E+'LocalHolds.java', "if (slot.owner != owner) {", "if (true) {", "GcsLockRegistryTest#reentrantAcquireOnOneThreadMakesNoRequestAndReleasesWithTheOutermost"),
 # issue 20: a hold belongs to its owner (thread or invocation); an invocation's hold is not the thread's that took it
 ("owner: an invocation's hold is not its thread's", E+'LocalHolds.java', "slot.owner = slot.asking;", "slot.owner = Thread.currentThread();", "LockOwnerTest#anInvocationsHoldIsNotEnteredByTheThreadThatTookItNorByAnotherInvocation"),
 ("owner: an invocation does not wait for its own thread's hold", E+'Acquirer.java', "if (budget > 0 && owner != Thread.currentThread() && holds.ownedBy(slot, Thread.currentThread())) {", "if (false) {", "LockOwnerTest#anInvocationThatWouldWaitForItsOwnThreadsHoldFailsAtOnceInsteadOfWaitingForItself"),
 # rule 13: since rule 17's one heldBy predicate refuses a hold count of 0, the same thread coming back is refused without
 # these two; what they still carry is reentry's second look, against a releaseAfter on another thread between its two steps
 ("hold at least: the releasing thread is no longer the owner", E+'LocalHolds.java', ["            if (slot.holds == 0) {\n                slot.owner = null;\n            }\n", "if (slot.holds < 1) {\n                return null; // given back by releaseAfter meanwhile"], ["", "if (false) {\n                return null; // given back by releaseAfter meanwhile"], "GcsLockRegistryTest#aReleaseAfterOnAnotherThreadRacingTheOwnersReentryLeavesTheOwnerNoHold"),
 ("eviction: a slot with threads queued on it stays", E+'LocalHolds.java', "return users == 0 && lease == null;", "return lease == null;", "GcsLockRegistryTest#evictionNeverMakesASecondLocalOwnerOfAQueuedName"),
 ("eviction: a held slot stays", E+'LocalHolds.java', "return users == 0 && lease == null;", "return users == 0;", "GcsLockRegistryTest#localStateOfIdleNamesIsEvicted"),
 ("eviction at all", E+'LocalHolds.java', "return users == 0 && lease == null;", "return false;", "GcsLockRegistryTest#localStateOfIdleNamesIsEvicted"),
 ("tryLock(<=0) does not wait", E+'GcsDistributedLock.java', "Duration.ofNanos(Math.max(0, unit.toNanos(time)))", "Duration.ofNanos(unit.toNanos(time))", "GcsLockRegistryTest#tryLockWithANonPositiveTimeDoesNotWait"),
 ("obtain twice is one lock", E+'GcsLockRegistry.java', "return new GcsDistributedLock(this, name, lockViewHolds);", "return new GcsDistributedLock(this, name, new GcsDistributedLock.Holds());", "GcsLockRegistryTest#obtainTwiceIsOneLock"),
 ("prefix leaves room for a name", E+'LockSettings.java', "if (prefixBytes >= LockObject.MAX_OBJECT_NAME_BYTES) {", "if (false) {", "ValidationTest#aPrefixThatLeavesNoRoomForANameIsRefusedAtBuild"),
 ("names must be valid UTF-16", E+'LockObject.java', "int lone = unpairedSurrogateAt(name);", "int lone = -1;", "ValidationTest#rejectsBadLockNames"),
 ("bounded client", E+'LockStore.java', "Storage bounded = boundedStorage(given, operationTimeout);", "Storage bounded = given;", "AlgorithmRulesTest#everyOperationIsBoundedDespiteTheClientsOwnRetries"),
 ("contention: no create precondition", E+'LockStore.java', "LockObject.EMPTY, Storage.BlobTargetOption.doesNotExist());", "LockObject.EMPTY);", "ContentionTest"),
 # issue 10 hole 1: an adopted create is dated from the earliest create of the acquire whose outcome was unknown
 ("adoption dated from the earliest unknown create", E+'AcquireAttempt.java', "long writtenFrom = unknownCreates.writtenNoEarlierThan(sent);", "long writtenFrom = sent;", "EngineSafetyRulesTest#anObjectAdoptedAfterAnOutageLongerThanTheTtlIsConfirmedBeforeItIsHandedOut"),
 ("old adoption confirmed by a guarded PATCH", E+'AcquireAttempt.java', "if (nanoTime.getAsLong() - writtenFrom >= timing.refreshInterval().toNanos()) {", "if (false) {", "EngineSafetyRulesTest#anObjectAdoptedAfterAnOutageLongerThanARefreshIntervalIsConfirmedByAGuardedPatch"),
 # issue 10 hole 3: unconfirmed refreshes stay adoptable; release that meets 412 deletes the object if still ours
 ("unconfirmed refresh ids remembered", E+'UnconfirmedRefreshes.java', "byId.put(refreshId,", "byId.clear(); byId.put(refreshId,", "EngineSafetyRulesTest#aRefreshThatCommittedAfterItsTimeoutIsAdoptedByTheNextRefresh"),
 ("release re-reads after 412", E+'LeaseRelease.java', "                    deleteIfStillOurs(lease, calls);\n", "", "EngineSafetyRulesTest#releaseAfterARefreshWhoseReplyCameTooLateStillDeletesTheObject"),
 ("release after 412 deletes only our own object", E+'LeaseRelease.java', "if (current == null || current.getGeneration() != lease.fencingToken() || !me.isOurs(current, lease.leaseId())) {", "if (current == null) {", "EngineSafetyRulesTest#releaseThatMeets412LeavesAnObjectThatIsNoLongerOurs"),
 # issue 10 hole 5: close() wakes every waiter; a closed registry never hands out a lease
 ("close wakes waiters", E+'Acquirer.java', ["        for (int n = 0; ; ) {\n            issuer.checkOpen(name);", "                issuer.checkOpen(name);\n                if (budget > 0 && attempts.nanosUntilNextLook(name) > 0) {", "boolean woken = runtime.await(closing, Math.min(untilDue, left));", "if (runtime.await(closing, Math.min(remaining, delay))) {"], ["        for (int n = 0; ; ) {", "                if (budget > 0 && attempts.nanosUntilNextLook(name) > 0) {", "boolean woken = false; Thread.sleep(Math.min(untilDue, left) / 1_000_000);", "if (runtime.await(closing, Math.min(remaining, delay)) && false) {"], "EngineSafetyRulesTest#closeWakesEveryWaiterWhichFailsWithAClearException"),
 ("closed registry never hands out a lease", E+'LeaseIssuer.java', "            if (!closed) {\n                holds.own(slot, lease);", "            if (true) {\n                holds.own(slot, lease);", "EngineSafetyRulesTest#aCreateThatRacesCloseEndsWithItsObjectDeleted"),
 # issue 16 items 6 and 2 (engine side)
 ("listener Error releases the lease", E+'LeaseIssuer.java', "        } catch (Error e) {", "        } catch (StackOverflowError e) {", "EngineSafetyRulesTest#anErrorThrownByAListenerWhileHandingOutALeaseReleasesIt"),
 ("heldLeases excludes releasing leases", E+'LocalHolds.java', "if (!lease.isReleasing()) {\n                held.add(lease);", "if (true) {\n                held.add(lease);", "EngineSafetyRulesTest#aLeaseLeavesHeldLeasesWhenItsReleaseBegins"),
 # issue 10 hole 4 and issue 16 item 3: deadlines and listeners never wait behind I/O or each other
 ("deadline timer independent of refresh I/O", E+'LeaseKeeper.java', ["lease.deadlineArmed(deadlines.schedule(() -> {", "            refreshers.execute(task);\n"], ["lease.deadlineArmed(timer.schedule(() -> {", "            task.run();\n"], "EngineSafetyRulesTest#everyLostCallbackFiresBeforeTheTtlWhenRequestsHang"),
 # issue 22: refresh capacity grows with the refreshes in flight; the timer that starts refreshes does no I/O
 ("refresh threads grow with demand", E+'RefreshThreads.java', "return false; // every thread is busy: the executor starts one more", "return super.offer(task);", "RefreshCapacityTest#aSlowRefreshOfOneLeaseNeverDelaysAnothersRefresh"),
 ("the refresh timer hands requests to the refresh threads", E+'LeaseKeeper.java', "            refreshers.execute(task);\n", "            task.run();\n", "RefreshCapacityTest#aSlowRefreshOfOneLeaseNeverDelaysAnothersRefresh"),
 ("listeners off the refresher threads", E+'LockEventDispatcher.java', "            pool.execute(() -> drain(channel)); // never on the calling thread", "            drain(channel); // never on the calling thread", "EngineSafetyRulesTest#aSlowListenerDoesNotDelayTheRefreshesOfAnotherLease"),
 ("listener events in order per lock", E+'LockEventDispatcher.java', "            start = !lane.owned;\n            lane.owned = true;", "            start = true;\n            lane.owned = true;", "EngineSafetyRulesTest#eventsOfOneLockArriveInOrderWhenAListenerIsSlow"),
 # issue 10 "fencing tokens": a generation not greater than one seen before for the name is reported
 ("fencing regression reported", E+'FencingRecord.java', "if (before != null && (lease.fencingToken() < before.generation()", "if (false && (lease.fencingToken() < before.generation()", "EngineSafetyRulesTest#anAcquisitionWhoseFencingTokenDidNotIncreaseIsReported"),
 ("fencing: adopted object is no regression", E+'FencingRecord.java', "(lease.fencingToken() == before.generation() && !lease.leaseId().equals(before.leaseId()))", "(lease.fencingToken() == before.generation())", "EngineSafetyRulesTest#adoptingOurOwnCreateIsNotAFencingRegression"),
 ("observed time: unchanged version stale after its TTL", E+'LockInspector.java', "                        > objectTtl.toNanos();", "                        > Long.MAX_VALUE;", "ObservedTimeTest#aDeadLockIsTakenOverByAProcessThatLooksLessOftenThanTheAnchorWindow"),
 ("observed time: a new metageneration restarts the count", E+'UnchangedVersions.java', "|| seen.metageneration != metageneration) {", ") {", "ObservedTimeTest#aLockRefreshedBetweenLooksIsNotTakenOver"),

 # issue 13: an acquisition's own TTL (stored in the object, its own refresh cadence and deadline; renewals)
 ("per-acquisition TTL stored in the object", E+'AcquireAttempt.java', "        Duration ttl = timing.ttl();\n", "        Duration ttl = Duration.ofMinutes(5);\n", "PerAcquisitionTtlTest#aHolderThatStopsRefreshingLosesTheLeaseAndIsTakenOverAfterItsOwnTtl"),
 ("per-acquisition TTL judges the lease's own deadline", E+'LeaseIssuer.java', "sentNanos, timing);", "sentNanos, context.defaultTiming());", "PerAcquisitionTtlTest#aHolderThatStopsRefreshingLosesTheLeaseAndIsTakenOverAfterItsOwnTtl"),
 ("refresh writes the lease's TTL", E+'LeaseKeeper.java', "LockObject.TTL, Long.toString(sending.ttl().toMillis())", "LockObject.TTL, Long.toString(lease.timing().ttl().toMillis())", "PerAcquisitionTtlTest#renewalRefreshesAtOnceAndMayChangeTheTtl"),
 ("a shorter TTL caps the deadline when sent", E+'GcsLease.java', "if (sent.deadlineSpanNanos() < timing.deadlineSpanNanos()) {", "if (false) {", "PerAcquisitionTtlTest#aShorterTtlCapsTheDeadlineFromTheMomentItIsSent"),
 # rule 14: the refresher's release is in flight, so awaitReleases waits for it too; the refresher's own wait is what keeps
 # close() from interrupting it (CloseDuringReleaseTest#closeWaitsForADeferredReleaseWhoseDeleteIsInFlight passes without)
 ("close waits for releases in progress", E+'LeaseIssuer.java', "keeper.close(releaseBound, holdsAnIoLock);", "keeper.close();", "CloseDuringReleaseTest#closeDoesNotInterruptADeferredReleaseWhoseDeleteIsInFlight"),
 ("a lease past its deadline on arrival is not handed out", E+'AcquireAttempt.java', "if (nanoTime.getAsLong() - lease.deadlineNanos() < 0) {\n            return false;", "if (true) {\n            return false;", "PerAcquisitionTimingTest#aLeaseWhoseCreateReplyArrivesPastItsDeadlineIsNotHandedOut"),
 ("calls for a short-TTL lease bounded by its TTL/3", E+'EngineContext.java', "return bound.compareTo(operationTimeout) < 0 ? store.boundedTo(bound) : store;", "return store;", "PerAcquisitionTimingTest#aShortPerAcquisitionTtlLeaseSurvivesOneHungRefreshReplyLikeARegistryTtlLease"),
 ("acquired first among a lease's events", E+'Listeners.java', "return events.reserveHere(channels, tasks); // one place per listener for both events", "return () -> all.forEach(r -> handedOut(r.listener, lease, highestSeenBefore));", "ListenerOrderTest"),
 # issue 15: the request economy of acquiring (DESIGN.md rule 16)
 ("a waiter's look at a name seen held is a read", E+'AcquireAttempt.java', "                : Start.READ;", "                : Start.CREATE;", "AcquireEconomyTest#aNameSeenHeldLongerAgoOrByAWaiterIsReadFirst"),
 ("one-shot at a name seen held moments ago: the create alone", E+'AcquireAttempt.java', ": oneShot && before.knownYoungAt(look) ? Start.CREATE_REFUSING_UNREAD", ": false ? Start.CREATE_REFUSING_UNREAD", "AcquireEconomyTest#aOneShotAttemptAtANameSeenHeldMomentsAgoCostsOneRequest"),
 ("one-shot attempts still read at least every quarter TTL", E+'ContentionHistory.java', "return nowNanos - youngUntilNanos < 0;", "return true;", "AcquireEconomyTest#aDeadHolderIsTakenOverByAProcessThatOnlyTriesOnce"),
 ("no second read after a create refused once the name was seen free", E+'AcquireAttempt.java', "} else if ((sawFree || knownYoung) && !unknownCreates.mayHaveCommittedUnseen()) {", "} else if (knownYoung && !unknownCreates.mayHaveCommittedUnseen()) {", "AcquireEconomyTest#aCreateRefusedAfterTheNameWasSeenFreeIsNotReadAgain"),
 ("no second read only when safe: a create of this attempt may be ours", E+'AcquireAttempt.java', "                    if (!singleTry) {", "                    if (sawFree || knownYoung) {\n                        return Result.refusedUnread(sawFree);\n                    } else if (!singleTry) {", "AcquireEconomyTest#aRefusedCreateThatMayBeOurOwnIsReadAndAdopted"),
 ("no second read only when safe: a create of an earlier call may commit late", E+'AcquireAttempt.java', "if (history.mayHaveUnseenCreate(name, look, timing.ttl().toNanos())) {", "if (false) {", "AcquireEconomyTest#aCreateOfAnEarlierCallThatCommitsLateIsReadAndRetaken"),
 ("waiting pace kept across calls", E+'Acquirer.java', "long untilDue = budget > 0 ? attempts.nanosUntilNextLook(name) : 0;", "long untilDue = 0;", "AcquireEconomyTest#backToBackShortWaitsKeepThePaceOfTheLooksAcrossCalls"),
 ("a clean release lets the next one-shot refuse unread", E+'LeaseRelease.java', "                releasedCleanly.accept(lease.name(), sent);", "", "AcquireEconomyTest#aOneShotAfterACleanReleaseLosesWithTheCreateAlone"),
 ("after a 429 on create the waiter creates again without a read", E+'AcquireAttempt.java', "Start start = afterThrottledCreate ? Start.CREATE", "Start start = false ? Start.CREATE", "AcquireEconomyTest#aWaiterCreatesAgainWithoutAReadAfterItsCreateMet429"),
 ("a one-shot look paces no wait", E+'AcquireAttempt.java', "return s == null || !s.paced() ? 0", "return s == null ? 0", "AcquireEconomyTest#aWaitingCallAfterAOneShotLookAsksAtOnce"),
 ("a wait of zero always asks", E+'Acquirer.java', "long untilDue = budget > 0 ? attempts.nanosUntilNextLook(name) : 0;", "long untilDue = attempts.nanosUntilNextLook(name);", "AcquireEconomyTest#aOneShotAttemptAlwaysMakesARequest"),
 ("close wakes a waiter sleeping until its next look", E+'Acquirer.java', "boolean woken = runtime.await(closing, Math.min(untilDue, left));", "boolean woken = ((java.util.function.BooleanSupplier) () -> { try { Thread.sleep(Math.min(untilDue, left) / 1_000_000); } catch (InterruptedException e) { Thread.currentThread().interrupt(); } return false; }).getAsBoolean();", "AcquireEconomyTest#closeWakesAWaiterSleepingUntilItsNextLook"),
 # review of rule 16 (EconomyReviewTest): a waiter sleeps without the permit; a 429'd single try did not commit;
 # a wait that made no request says so
 ("a waiter sleeps until its next look without the name's permit", E+'Acquirer.java', "boolean woken = runtime.await(closing, Math.min(untilDue, left));", "slot.permit.acquire(); boolean woken; try { woken = runtime.await(closing, Math.min(untilDue, left)); } finally { slot.permit.release(); }", "EconomyReviewTest#aOneShotAttemptAsksWhileAnotherThreadOfThisProcessSleepsUntilItsNextLook"),
 ("a 429 to a single-try create did not commit", E+'AcquireAttempt.java', "if (!(singleTry && e.getCode() == 429)) {", "if (true) {", "EconomyReviewTest#aRateLimitedCreateIsNotRememberedAsOneThatMayHaveCommitted"),
 ("a wait that made no request says so", E+'Acquirer.java', ": LockNotAcquiredException.noLookDue(name, maxWait, holder);", ": new LockNotAcquiredException(name, maxWait, holder, null, true);", "EconomyReviewTest#aWaitThatMadeNoRequestDoesNotSayItsCreateWasBeaten"),
 ("poll cap grows with the time waited", E+'WaitPacing.java', "long cap = Math.max(backoff.initial().toNanos(), Math.min(waitedNanos, Long.MAX_VALUE / WAITED_FACTOR) * WAITED_FACTOR);", "long cap = backoff.initial().toNanos();", "WaitPacingTest#theCapGrowsWithTheTimeWaitedWithinItsBounds"),
 # issue 21 items 1 and 2: a renewal either reached the object with its own TTL or changed nothing
 ("renew: a failed renewal changes nothing", E+'LeaseKeeper.java', "                lease.retargetBack(next, before);\n", "", "RenewalUnderFaultsTest#aRenewalToALongerTtlThatFailsLeavesTheLeaseAsItWas"),
 ("renew: the cadence fits the shortest TTL that may judge the object", E+'GcsLease.java', "        if (deadlineCapped && cap != null && cap.refreshInterval().compareTo(d) < 0) {", "        if (false) {", "RenewalUnderFaultsTest#aRenewalToAShorterTtlWhoseReplyCameLateKeepsTheLeaseByRefreshingAtTheShorterCadence"),
 ("renew: after adopting an earlier refresh it writes its own TTL", E+'LeaseKeeper.java', "            if (done == Refresh.ADOPTED_EARLIER) {", "            if (false) {", "RenewalUnderFaultsTest#aRenewalThatAdoptsAnEarlierRefreshStillWritesItsOwnTtl"),
 # issue 21 items 5, 6, 7: event order across leases; close() vs a lost create reply; release on an interrupted thread
 ("events: the next lease's acquired comes after the earlier events of its lock", E+'LockEventDispatcher.java', "            if (entry.taken || lane.owned || lane.queue.peek() != entry) {", "            if (entry.taken) {", "EventOrderAcrossLeasesTest#theNextLeasesAcquiredComesAfterEveryEventOfTheLeaseBefore"),
 ("events: a listener acquiring its own lock does not wait for itself; what it raises in its own callback is queued behind it", E+'LockEventDispatcher.java', "            if (entry.taken || lane.owned || lane.queue.peek() != entry) {", "            if (entry.taken) {", "EventOrderAcrossLeasesTest#aListenerThatAcquiresItsOwnLockAgainDoesNotWaitForItself"),
 ("close: a waiter deletes its own create whose reply was lost", E+'Acquirer.java', "            if (unknownCreates.ofThisCall()) {", "            if (false) {", "CloseAndInterruptedReleaseTest#closeRacingAWaitersCreateWhoseReplyWasLostEndsWithTheObjectDeleted"),
 ("release: the guarded delete runs with the interrupt flag clear", [E+'CallsThroughInterrupts.java', E+'LeaseRelease.java', E+'CallsThroughInterrupts.java'], ["        seen = Thread.interrupted();\n", "            } catch (InterruptedException e) {\n                interrupted = true;\n            }", "                if (!interrupted || resends >= RESENDS_AFTER_INTERRUPTS) {\n                    throw broken;"], ["        seen = false;\n", "            } catch (InterruptedException e) {\n                Thread.currentThread().interrupt();\n                return true;\n            }", "                if (true) {\n                    throw broken;"], "CloseAndInterruptedReleaseTest#aReleaseOnAnInterruptedThreadAfterA429DeletesTheObjectAndKeepsTheFlag"),
 ("release: the interrupt flag is given back", E+'CallsThroughInterrupts.java', "        if (seen || Thread.interrupted()) {\n            Thread.currentThread().interrupt();", "        if (false) {\n            Thread.currentThread().interrupt();", "CloseAndInterruptedReleaseTest#aReleaseOnAnInterruptedThreadKeepsTheFlag"),
 # engine review 3 (fix-21): renewals one at a time, interrupts, events of the next call queued behind the last lease's
 ("renew: one renewal of a lease at a time", E+'LeaseKeeper.java', ["        lease.lockIo();\n        try {\n            LeaseTiming before = lease.target();", "            return confirmed;\n        } finally {\n            lease.unlockIo();\n        }"], ["        try {\n            LeaseTiming before = lease.target();", "            return confirmed;\n        } finally {\n        }"], "EngineReview3Test#concurrentRenewalsEachReturnOnlyWithTheirOwnTtlInTheObject"),
 ("refresh: the caller's interrupt is not a GCS failure", E+'LeaseKeeper.java', "        if (Thread.currentThread().isInterrupted()) {\n            // The caller's own interrupt", "        if (false) {\n            // The caller's own interrupt", "EngineReview3Test#renewalsOnAnInterruptedThreadAfterA429DoNotLoseAHealthyLease"),
 ("release: a call is sent again after each interrupt, not once", E+'CallsThroughInterrupts.java', "if (!interrupted || resends >= RESENDS_AFTER_INTERRUPTS) {", "if (!interrupted || resends >= 1) {", "EngineReview3Test#aReleaseInterruptedTwiceDuringItsRetriesStillDeletesTheObject"),
 # issue 29: found by the interleaving explorer on the unmutated engine (an object left after every close())
 ("rule 11 at hand-out: the late object's delete is sent whatever the interrupt flag says", E+'AcquireAttempt.java', "        CallsThroughInterrupts calls = new CallsThroughInterrupts();\n        try {\n            calls.send(() -> store.deleteIfUnchanged(object));", "        CallsThroughInterrupts calls = new CallsThroughInterrupts();\n        calls.restoreFlag();\n        try {\n            store.deleteIfUnchanged(object);", "PerAcquisitionTimingTest#theLateObjectOfAnInterruptedCallIsDeletedAndTheInterruptGivenBack"),
 # issue 29: the independent review of the change above (its third clean-up was unpinned; the leaked retake was left out)
 ("rule 3: a lost-reply create's read is sent again after an interrupt broke it", E+'AcquireAttempt.java', "Blob current = calls.send(() -> store.read(store.id(name)));", "Blob current = store.read(store.id(name));", "InterruptedCleanUpTest#n2WaiterCleanupInterruptedFourTimesStillDeletesItsObject"),
 ("rule 4: the leaked object's DELETE is sent whatever the interrupt flag says", E+'AcquireAttempt.java', "                    deleted = calls.send(() -> store.deleteIfUnchangedOutcome(leaked));", "                    calls.restoreFlag();\n                    deleted = store.deleteIfUnchangedOutcome(leaked);", "InterruptedCleanUpTest#n7LeakedRetakeInterrupted"),
 ("release: the 412 path's guarded re-delete is sent again after an interrupt", E+'LeaseRelease.java', "        calls.send(() -> store.delete(current.getBlobId(), current.getGeneration(), current.getMetageneration()));", "        store.delete(current.getBlobId(), current.getGeneration(), current.getMetageneration());", "EngineReview3Test#anInterruptDuringTheReleaseOfAnObjectMovedByOurOwnLateRefreshDoesNotLeaveIt"),
 ("events: notAcquired among the lock's events", E+'Listeners.java', "acquisitionEvent(name, l -> l.notAcquired(name, holder));", "all.forEach(r -> tell(r.listener, x -> x.notAcquired(name, holder)));", "EngineReview3Test#eventsOfOneLockDoNotOverlapWhenTheNextCallIsRefused"),
 ("events: fencingTokenRegression among the lock's events", E+'Listeners.java', "tasks.add(() -> handedOut(r.listener, lease, highestSeenBefore));", "tasks.add(() -> handedOut(r.listener, lease, null));\n            if (highestSeenBefore != null) {\n                tell(r.listener, x -> x.fencingTokenRegression(lease, highestSeenBefore));\n            }", "EngineReview3Test#aFencingRegressionOfTheNextLeaseComesAfterEveryEventOfTheLeaseBefore"),
 # issue 21 items 3 and 4: the drift window per lock; inspection never blinds acquisition
 ("drift: a lock is judged on anchors of its own window", E+'GcsTimeEstimator.java', "Instant now = lowerBoundWithin(window);", "Instant now = lowerBoundWithin(windowNanos);", "PerLockTimeTest#aLockIsJudgedOnAnchorsOfItsOwnWindowOnly"),
 ("observed time: inspection only reads the record", E+'LockInspector.java', ": unchangedVersions.peek(", ": unchangedVersions.unchangedForNanos(", "PerLockTimeTest#aLargeListBetweenLooksDoesNotHideADeadLockFromAOneShotJob"),
 # issue 21 item 8: a one-shot refuses unread until the object it read could be stale, then reads
 ("one-shot: refuses unread never past the moment the object it read could be stale", E+'AcquireAttempt.java', "Math.min(look + quarterOf(result.holder(), fresh), couldFirstBeStaleNanos(result.holder(), look))", "look + quarterOf(result.holder(), fresh)", "OneShotTakeoverTest#aDeadHolderIsTakenOverAtTheFirstAttemptAfterItsObjectCouldBeStale"),
 # issue 29: found by EngineExplorerPropertyTest (rules 19 and 20)
 ("TTL at most 100 years", E+'LeaseTiming.java', "if (ttl.compareTo(LockObject.MAX_TTL) > 0) {", "if (false) {", "ExplorerFindingsTest#aTtlBeyondAHundredYearsIsRefusedNamingTheLock"),
 ("a TTL read from an object counts as at most 100 years", E+'LockObject.java', "return ms <= 0 ? fallback : ms >= MAX_TTL.toMillis() ? MAX_TTL : Duration.ofMillis(ms);", "return ms <= 0 ? fallback : Duration.ofMillis(ms);", "ExplorerFindingsTest#anObjectCarryingAHugeTtlIsReadByEveryProcess"),
 ("releaseAfter beyond nanoseconds holds until close", E+'LeaseKeeper.java', "long nanos = delay.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE : delay.toNanos();", "long nanos = delay.toNanos();", "ExplorerFindingsTest#aReleaseAfterForeverHoldsUntilClose"),
 ("renew and releaseAfter take only this registry's leases", E+'GcsLockRegistry.java', "if (target == null || !target.issuedBy(issuer)) {", "if (target == null) {", "ExplorerFindingsTest#renewAndReleaseAfterRefuseALeaseOfAnotherRegistry"),
 ("every listener is told whatever another threw", E+'LockEventDispatcher.java', "                if (first == null) {\n                    first = e;", "                if (true) {\n                    throw e;", "ExplorerFindingsTest#aListenerThatThrowsAnErrorHidesNoEventFromTheOthers"),
 ("an onLost listener's Error hides nothing", E+'GcsLease.java', "            } catch (Error e) {\n                // rule 20: one failing listener", "            } catch (StackOverflowError e) {\n                // rule 20: one failing listener", "ExplorerFindingsTest#aListenerThatThrowsAnErrorHidesNoEventFromTheOthers"),
 ("an acquireFinished Error after the hand-out releases the lease", E+'Acquirer.java', "                issuer.releaseFailedHandOut(handedOut);\n", "", "ExplorerFindingsTest#anErrorOfAnAcquireFinishedListenerAfterTheHandOutReleasesTheLease"),
 ("a failing acquisition keeps its own exception when acquireFinished throws", E+'Acquirer.java', "if (failed != null && failed != e) {", "if (false) {", "ExplorerFindingsTest#aCallThatFailsKeepsItsDocumentedExceptionWhenAnAcquireFinishedListenerThrows"),
 # issue 29: found by the interleaving explorer (a wait whose budget ran out in the local queue spun until the look came due)
 ("wait loop: no spin once the budget has run out", E+'Acquirer.java', "long untilDue = budget > 0 ? attempts.nanosUntilNextLook(name) : 0;", "long untilDue = budget > 0 && left > 0 ? attempts.nanosUntilNextLook(name) : 0;", "EngineInterleavingExplorerTest#aWaitWhoseBudgetRanOutWhileAnotherThreadPacesEndsWithoutSpinning"),
 ("close: a second close() waits for the first", E+'LeaseIssuer.java', "                awaitUninterruptibly(closeDone);\n                awaitWorkTheFirstCloseLeftToItsOwnThread();\n            }\n            return;", "            }\n            return;", "ExplorerFindingsTest#aSecondCloseReturnsOnlyWhenTheFirstHasReleasedEverything"),
 ("close: waits for releases in flight on application threads", E+'LeaseIssuer.java', "if (!release.awaitReleases(deadline)) {", "if (false) {", "ExplorerFindingsTest#closeWaitsForAReleaseInFlightOnAnApplicationThread"),
 ("close: an interrupted closing thread waits all the same", [E+'LeaseKeeper.java', E+'LeaseRelease.java'], ["                } catch (InterruptedException e) {\n                    interrupted = true;\n                }\n            }", "                } catch (InterruptedException e) {\n                    interrupted = true;\n                }\n            }\n        } finally {"], ["                } catch (InterruptedException e) {\n                    interrupted = true;\n                    break;\n                }\n            }", "                } catch (InterruptedException e) {\n                    interrupted = true;\n                    return false;\n                }\n            }\n        } finally {"], "ExplorerFindingsTest#anInterruptedCloseStillWaitsForAReleaseInFlightAndKeepsTheFlag"),
 ("close: released events of close() go to the listener threads", E+'LeaseIssuer.java', "            LockEventDispatcher.asEngineThread(() -> {", "            ((java.util.function.Consumer<Runnable>) Runnable::run).accept(() -> {", "ExplorerFindingsTest#aSlowReleasedListenerOfOneLockDoesNotHoldUpTheReleaseOfAnotherAtClose"),
 # issue 29: the interleaving explorer's findings (EngineInterleavingExplorerTest)
 ("release: a release() racing close()'s release of its lease waits for it", E+'LeaseRelease.java', "        if (!release(lease)) {\n            awaitReleaseByAnotherThread(lease, runtime.nanoTime() + releaseBound.toNanos());\n        }", "        release(lease);", "ExplorerFindingsTest#aReleaseRacingClosesReleaseOfItsLeaseReturnsOnlyOnceTheObjectIsDeleted"),
 ("close: a release counts in flight from the step that begins it", E+'LeaseRelease.java', ["                if (!lease.beginRelease()) {\n                    return false;\n                }\n                inFlight.add(lease);\n                return true;", "            lease.lockIo(); // waits for an in-flight refresh, whose metageneration we need\n"], ["                return lease.beginRelease();", "            lease.lockIo(); // waits for an in-flight refresh, whose metageneration we need\n            synchronized (inFlight) {\n                inFlight.add(lease);\n            }\n"], "ExplorerFindingsTest#closeWaitsForAnApplicationReleaseFromItsFirstStep"),
 # rule 20 holds a release's events back until it has ended: no listener runs on a releasing thread; the application's
 # transport does (closeCalledByAListenerOfItsOwnThreadsReleaseDoesNotWaitForItself passes without this)
 ("close: no wait for a release running on the closing thread itself", E+'LeaseRelease.java', "                    if (!lease.releasingOnThisThread() && !lease.ioHeldByCurrentThread()) {\n                        running = lease;", "                    if (true) {\n                        running = lease;", "ExplorerFindingsTest#closeCalledOnAReleasingThreadByTheApplicationsTransportDoesNotWaitForThatRelease"),
 ("a waiter ended any way deletes its own unknown create", E+'Acquirer.java', "        } catch (IllegalStateException | InterruptedException | GcsLockException ended) {", "        } catch (IllegalStateException ended) {", "ExplorerFindingsTest#aWaiterInterruptedAfterItsCreateReplyWasLostDeletesItsObject"),
 ("events: an application thread runs only its own event", E+'LockEventDispatcher.java', "                pool.execute(() -> drain(channel)); // still owned: handed to a pool thread", "                drain(channel); // still owned: handed to a pool thread", "ExplorerFindingsTest#anApplicationThreadRunsOnlyItsOwnEventNotTheOnesRaisedMeanwhile"),
 ("events: a queue per listener and lock: a blocked listener delays no other listener, nor another lease's onLost", E+'Listeners.java', ["return new LockEventDispatcher.Channel(name == null ? NO_LOCK : name, registration);", "return new LockEventDispatcher.Channel(lease.name(), lease);"], ["return new LockEventDispatcher.Channel(name == null ? NO_LOCK : name, null);", "return new LockEventDispatcher.Channel(lease.name(), null);"], "EventOrderAcrossLeasesTest#aListenerBusyWithOneLeaseDelaysNoOtherListenerOfTheNextLeasesLoss"),
 ("events: a reservation not begun is taken over by a listener thread when a later event arrives (acquiring thread)", E+'LockEventDispatcher.java', ["            start = !lane.owned;\n            lane.owned = true;", "            start = !lane.owned && lane.queue.size() > 1;"], ["            start = !lane.owned && lane.queue.size() == 1;\n            lane.owned = lane.owned || start;", "            start = false;"], "ListenerChannelReviewTest#aListenerBlockedInAcquiredDelaysNoOtherListenersLoss"),
 ("events: a reservation not begun is taken over by a listener thread when a later event arrives (releasing thread)", E+'LockEventDispatcher.java', ["            start = !lane.owned;\n            lane.owned = true;", "            start = !lane.owned && lane.queue.size() > 1;"], ["            start = !lane.owned && lane.queue.size() == 1;\n            lane.owned = lane.owned || start;", "            start = false;"], "ListenerChannelReviewTest#aListenerBlockedInReleasedOnTheReleasingThreadDelaysNoOtherListenersNextLease"),
 ("events: no listener runs under a lease's I/O lock", E+'GcsLease.java', "        if (io.getHoldCount() == 1) {\n            LockEventDispatcher.holdBack();", "        if (false) {\n            LockEventDispatcher.holdBack();", "ListenerChannelReviewTest#aListenerBlockingInARenewalsRequestEventHoldsBackNoRefreshOfTheLease"),
 ("a one-shot that failed deletes its own unknown create", E+'Acquirer.java', "                    if (unknownCreates.ofThisCall() && !answered) {\n                        attempts.deleteOwnUnknownCreate(", "                    if (false) {\n                        attempts.deleteOwnUnknownCreate(", "ExplorerFindingsTest#aOneShotOnAnInterruptedThreadWhoseCreateReplyWasLostLeavesNoObject"),
 ("poll cap at most a quarter of the holder's TTL", E+'WaitPacing.java', "upper = Math.min(upper, holderTtl.toNanos() / LOOKS_PER_TTL);", "upper = upper + 0;", "WaitPacingTest#theCapGrowsWithTheTimeWaitedWithinItsBounds"),
 # issue 27, rule 21: no write of ours to one object within writeRateWindow of our previous write to it
 ("write window: refreshes scheduled after it and waited for", E+'LeaseKeeper.java', ["long at = later(dueNanos, windowWaitEnd(lease));", "|| !awaitWriteWindow(lease)) {"], ["long at = dueNanos;", ") {"], "WriteWindowTest#refreshesAskedForMoreOftenThanTheWindowAllowsComeOnePerWindowWithout429"),
 ("write window: a renewal waits it out", E+'LeaseKeeper.java', "|| !awaitWriteWindow(lease)) {", ") {", "WriteWindowTest#aRenewalRightAfterARefreshWaitsOutTheWindow"),
 ("write window: counted from the end of a call that committed late", E+'LeaseKeeper.java', "            lease.wrote(engine.nanoTime());\n            if (!engine.isOurs(after, lease.leaseId())) {", "            if (!engine.isOurs(after, lease.leaseId())) {", "WriteWindowTest#theWindowCountsFromTheEndOfACallWhoseWriteCommittedLate"),
 ("write window: the release waits it out", E+'LeaseRelease.java', "calls.interruptSeen(awaitWriteWindow(lease));", "", "WriteWindowTest#aReleaseRightAfterTheCreateWaitsOutTheWindow"),
 ("write window: a takeover's create waits it out after its own DELETE", E+'AcquireAttempt.java', "                    awaitWriteWindow(ownDeleteEnded);\n", "", "WriteWindowTest#aStaleTakeoverCreatesAWindowAfterItsOwnDelete"),
 ("write window: waited for only while the refresh can still be confirmed before the deadline (rule 11 first)", E+'LeaseKeeper.java', "return earlier(windowEnd(lease), latestSend);", "return windowEnd(lease);", "WriteWindowReviewTest#aSlowButHealthyGcsWithinTheOperationTimeoutKeepsTheLease"),
 ("write window: a new acquisition's create waits it out after our last DELETE of the object", E+'AcquireAttempt.java', "} else if (awaitWriteWindowAfterAnEarlierDelete(name, store, id)) {", "} else if (false) {", "WriteWindowReviewTest#aReacquireRightAfterOurOwnReleaseWaitsOutTheWindow"),
 ("write window: a create that waited after our DELETE is not sent once the registry is closed", E+'LeaseIssuer.java', "            if (closed) {\n                throw closedException(name);\n            }\n            AcquireAttempt.CreateInFlight create", "            AcquireAttempt.CreateInFlight create", "WriteWindowAfterOwnDeleteTest#closeWhileACreateWaitsOutTheWindowSendsNoCreate"),
 ("write window: a per-lease TTL too short for window + 1.5 call bounds is refused", E+'LeaseTiming.java', "return needed < timing.deadlineSpanNanos();", "return window.toNanos() < timing.deadlineSpanNanos();", "WriteWindowReviewTest#aPerAcquisitionTtlTheEngineAcceptsSurvivesItsFirstRefreshesWithoutFaults"),
 ("write window: a TTL too short for it is refused at build", E+'LockSettings.java', "if (!writeWindowFits(ttl)) {", "if (false) {", "ValidationTest#aTtlTooShortForTheWriteWindowIsRefusedNamingTheSmallestTtlThatWorks"),
 # issue 29: found by EngineExplorerPropertyTest's wire oracle: the quarter TTL of a one-shot's unread refusals
 ("one-shot: trusts a read for a quarter of the TTL of the holder it read", E+'AcquireAttempt.java', "look + quarterOf(result.holder(), fresh)", "look + fresh", "OneShotTakeoverTest#aOneShotTrustsItsReadForAQuarterOfTheTtlOfTheHolderItRead"),
 # issue 29 section 4: the review of the reservations (Rule20ReviewTest)
 ("events: acquireStarted among the lock's events", E+'Listeners.java', "acquisitionEvent(announced.registrations, name, l -> l.acquireStarted(name, mode));", "announced.registrations.forEach(r -> tell(r.listener, x -> x.acquireStarted(name, mode)));", "Rule20ReviewTest#theNextCallsAcquireStartedComesAfterThePreviousLeasesLostAndReleased"),
 ("events: acquireFinished among the lock's events", E+'Listeners.java', "acquisitionEvent(to, name, l -> l.acquireFinished(name, outcome, took));", "to.forEach(r -> tell(r.listener, x -> x.acquireFinished(name, outcome, took)));", "Rule20ReviewTest#aListenersAcquireFinishedNeverOverlapsItsOwnLost"),
 ("events: a channel per registration, not per listener object", E+'Listeners.java', "return new LockEventDispatcher.Channel(name == null ? NO_LOCK : name, registration);", "return new LockEventDispatcher.Channel(name == null ? NO_LOCK : name, registration.listener);", "Rule20ReviewTest#aListenerRegisteredTwiceIsToldAcquiredOnTheAcquiringThreadAndItsErrorFailsTheCall"),
 ("events: a loss is queued for every listener in the step that declares it (before any release can follow it)", E+'GcsLease.java', "            state = State.LOST;\n            lostReason = reason;\n            cancelRefresh();", "            state = State.LOST;\n            lostReason = reason;\n        }\n        {\n            cancelRefresh();", "Rule20ReviewTest#aReleaseByAnOnLostListenerComesAfterEveryListenersLost"),
 ("tryAcquire: an interrupt that cuts it short is reported as one, not as an outage", E+'Acquirer.java', "throw LockStore.cutShortByInterrupt(e) ? LockStore.interrupted(name, e) : store.unavailable(name, e);", "throw store.unavailable(name, e);", "InterruptedGcsCallTest#anInterruptedOneShotIsReportedAsAnInterruptNotAsAnOutage"),
 # issue 29, review3 of rule 20: a failed call never leaves a lease held, whatever holds a listener took on it
 # issue 29: rule 17 after rule 20's acquireStarted (Rule20Review2Test's disabled test 16)
 ("rule 17: the reentrancy check runs again after acquireStarted", E+'Acquirer.java', ["        // Rule 17: a listener may have taken the name for this very owner inside acquireStarted (on this thread).\n        reentrant = holds.reenter(slot, name, owner);", "(Lock.lock(): for ever).\n        reentrant = holds.reenter(slot, name, owner);\n        if (reentrant != null) {\n            return reentrant;\n        }\n        refuseWaitForOwnThread(name, slot, budget, owner);"], ["        reentrant = null;", "(Lock.lock(): for ever).\n        reentrant = null;"], "Rule20Review2Test#aWaitWhoseListenerTookTheLockInAcquireStartedDoesNotWaitForItsOwnThreadsHold"),
 ("rule 17: a call made reentrant in acquireStarted is told acquireFinished", E+'Acquirer.java', ["if (call.told || !(lease.orElse(null) instanceof ReentrantHold))", "if (call.told || !(lease instanceof ReentrantHold))"], ["if (!(lease.orElse(null) instanceof ReentrantHold))", "if (!(lease instanceof ReentrantHold))"], "Rule17AcquireStartedTest#aWaitWhoseListenerTookTheLockForItsOwnerIsAReentrantHoldOfThatLease"),
 # review 4 (A12/A13): an owner whose hold is being given back on another thread holds nothing
 ("rule 17: a hold whose release is under way is not an enclosing hold", E+'LocalHolds.java', ["if (lease == null || lease.isReleasing()) {", "            return slot.holds < 1 ? null : lease;"], ["if (lease == null) {", "            return lease;"], "ReentryDuringOwnReleaseTest#aLostHoldGivenBackOnAnotherThreadIsNoEnclosingHoldForTheOwnersNextCalls"),
 # (both conditions: a plain release gives its last hold back before it begins, so either alone covers it; a failed
 # hand-out's release begins with its hold count still 1)
 # the same blind spot in the refusal of an invocation's wait for its own thread's hold (one predicate for both)
 ("rule 17: an invocation on a thread whose hold is being released elsewhere is refused as a wait for itself", E+'LocalHolds.java', "        return heldBy(slot, owner) != null;", "        return slot.owner == owner;", "ReentryDuringOwnReleaseTest#anInvocationOnTheThreadWhoseHoldIsBeingReleasedElsewhereWaitsForThatRelease"),
 ("events: an Error in acquireFinished releases the whole lease, not the call's hold", E+'Acquirer.java', "issuer.releaseFailedHandOut(handedOut);", "handedOut.release();", "Rule20Review2Test#anErrorInAcquireFinishedReleasesTheLeaseEvenIfAListenerTookANestedHoldOfIt"),
 # issue 29, e29: found by EngineInterleavingExplorerTest first (the bucket restored with lower generations)
 ("events: an Error in fencingTokenRegression hides acquired from no listener", E+'Listeners.java', "        try {\n            tell(listener, l -> l.acquired(lease));", "        if (failed == null) try {\n            tell(listener, l -> l.acquired(lease));", "FencingRegressionEventsTest#anErrorInFencingTokenRegressionHidesNoAcquiredFromAnyListenerAndReleasesTheLease"),
 # issue 29, e30b: the untriaged restore find (a restored lease's lost told before its acquired)
 ("events: fencingTokenRegression and acquired take one place among the lock's events, before the refreshes start", E+'Listeners.java', ["tasks.add(() -> handedOut(r.listener, lease, highestSeenBefore));", "return events.reserveHere(channels, tasks); // one place per listener for both events"], ["tasks.add(() -> handedOut(r.listener, lease, null));", "return () -> {\n            try {\n                if (highestSeenBefore != null) {\n                    acquisitionEvent(lease.name(), l -> l.fencingTokenRegression(lease, highestSeenBefore));\n                }\n            } finally {\n                events.runHereOrQueue(channels, tasks);\n            }\n        };"], "FencingRegressionEventsTest#aLeaseLostWhileAListenerBlocksInFencingTokenRegressionIsToldAcquiredBeforeLostByTheOthers"),
 ("events: a call's acquireFinished goes to the listeners told its acquireStarted", E+'Acquirer.java', "listeners.acquireFinished(name, outcome, start, audience);", "listeners.acquireFinished(name, outcome, start, null);", "ListenerRegisteredDuringACallTest"),
 # issue 29: found by the interleaving explorer (a lease handed out late lost with no fault)
 ("rule 10: the first refresh counts from the create's send, not the hand-out", E+'LeaseKeeper.java', "scheduleRefresh(lease, Math.min(engine.nanoTime(), lease.lastConfirmedNanos()) + (long) (period * share));", "scheduleRefresh(lease, engine.nanoTime() + (long) (period * share));", "FirstRefreshTest#aLeaseHandedOutLateIsRefreshedAtOnceInsteadOfOneIntervalAfterTheHandOut"),
 # issue 29: found by the interleaving explorer (a release() returning while another thread's release was in flight)
 ("release(): a second release waits for the release in flight", E+'GcsLease.java', "            engine.awaitReleaseInFlight(this);\n", "", "ReleaseInFlightTest#aSecondReleaseReturnsOnlyWhenTheReleaseInFlightHasEnded"),
 # review 5 (issue 29, e31): close() and the release bound (rule 14), no release waits for a listener (rule 20)
 ("rule 14: close() wakes a waiter queued on a local permit", E+'Acquirer.java', "        closing.countDown();\n        holds.openAll();", "        closing.countDown();", "CloseAndReleaseBoundsTest#closeWakesAWaiterQueuedOnTheLocalPermitBehindAListenerBlockingInNotAcquired"),
 ("rule 14: the release bound is one release's worst case", E+'GcsLockRegistry.java', "settings.operationTimeout().multipliedBy(8).plus(settings.writeRateWindow().multipliedBy(4))", "settings.operationTimeout().multipliedBy(4).plus(settings.writeRateWindow().multipliedBy(2))", "CloseAndReleaseBoundsTest#aReleaseRacingClosesReleaseReturnsOnlyOnceTheObjectIsGoneWhenEveryCallIsAnswered"),
 # 'rule 14: close() waits for releases that began while it waited' (R5-7, awaitReleases looks again) was taken off: an
 # equivalent mutation since close() waits for the creates in flight first (a raced create's delete happens in its flight)
 ("rule 14: close() waits one bound in all", E+'LeaseIssuer.java', ["            long deadline = release.nanoTime() + releaseBound.toNanos();\n", "            release.yieldPoint(\"close(): refresher closed\");\n"], ["", "            release.yieldPoint(\"close(): refresher closed\");\n            long deadline = release.nanoTime() + releaseBound.toNanos();\n"], "CloseAndReleaseBoundsTest#closeWaitsOneBoundInAllForAReleaseOnTheRefresherThatOutlastsIt"),
 ("rule 20: a release's request events are delivered once it has ended", E+'LeaseRelease.java', "        LockEventDispatcher.holdBack();\n        try {\n            runtime.yieldPoint(\"release of '\" + lease.name() + \"' begun\");", "        try {\n            runtime.yieldPoint(\"release of '\" + lease.name() + \"' begun\");", "CloseAndReleaseBoundsTest#closeDoesNotWaitForARequestListenerOfAnApplicationThreadsRelease"),
 # issue 29: found by the interleaving explorer (a forced delete right after our own create, its lease not handed out yet)
 ("rule 21: a forced delete waits out the window after our own create not handed out yet", E+'LeaseRelease.java', "Long created = name == null ? null : store.lastCreateEnded(store.id(name));", "Long created = null;", "WriteWindowTest#aForcedDeleteOfOurOwnCreateWhoseLeaseIsNotHandedOutYetWaitsOutTheWindowWithout429"),
 # issue 29: close() and the creates in flight (explorer seed 3244478702270568725)
 ("rule 14: close() waits for creates in flight", E+'LeaseIssuer.java', "if (!awaitCreates(deadline)) {", "if (false) {", "CloseDuringCreateTest#closeReturnsOnlyOnceACreateInFlightHasEndedAndLeavesNoObject"),
 ("rule 14: no create is sent once the registry is closed", E+'LeaseIssuer.java', "            if (closed) {\n                throw closedException(name);\n            }\n            AcquireAttempt.CreateInFlight create", "            AcquireAttempt.CreateInFlight create", "CloseDuringCreateTest#anAttemptWhoseReadEndsAfterCloseSendsNoCreate"),
 ("rule 14: close() does not wait for a create on its own thread", E+'LeaseIssuer.java', "if (create.thread != Thread.currentThread()) {", "if (true) {", "CloseDuringCreateTest#closeOnTheAcquiringThreadDoesNotWaitForItsOwnCreate"),
 ("rule 14: a create ends once its lease is registered, before the listeners", E+'LeaseIssuer.java', "        if (create != null) {\n            endCreate(create); // registered", "        if (false) {\n            endCreate(create); // registered", "CloseDuringCreateTest#closeDoesNotWaitForAnAcquiredListenerOfTheCreatesLease"),
 ("rule 14: a create of unknown outcome stays in flight until its call adopts or deletes the object", E+'AcquireAttempt.java', "                    if (unknown) {\n                        unknownCreates.keep(flight, engine::endCreate);", "                    if (false) {\n                        unknownCreates.keep(flight, engine::endCreate);", "CloseDuringCreateTest#closeDoesNotReturnWhileTheObjectOfALostCreateReplyIsBeingAdopted"),
 # issue 29, long run (seed 4650735212658955607): after a refused takeover DELETE the next request is a read
 ("rule 16: a refused takeover reads the object next", E+'AcquireAttempt.java', "                } else {\n                    readNext = true;\n                }", "                }", "AlgorithmRulesTest#aRefusedTakeoverReadsTheObjectNextInsteadOfCreating"),
 ("rule 16: a takeover DELETE that finds the object gone creates next without a read", E+'AcquireAttempt.java', "} else if (deleted == LockStore.GuardedDelete.GONE) {", "} else if (false) {", "AlgorithmRulesTest#aTakeoverDeleteThatFindsTheObjectGoneCreatesWithoutAnotherRead"),
 # issue 29: found by the interleaving explorer once a yield point opened the window (the deadline declaring the loss
 # between a refresh's check and its confirmation: 'refreshed' after 'lost')
 ("rule 11: a refresh is confirmed only while the lease is ACTIVE and within its deadline, in one step with the loss", E+'GcsLease.java', "if (state != State.ACTIVE || !releasing && engine.nanoTime() - deadlineNanos() >= 0) {", "if (false) {", "RefreshCapacityTest#aRefreshWhoseReplyComesAfterItsLeaseWasLostDoesNotReviveItOrReportARefresh"),
 # found by the independent review of the fix above: a release (or close()) waiting for a refresh answered past the
 # deadline was reported lost
 ("rule 11: a refresh answered past the deadline does not declare a releasing lease lost", E+'GcsLease.java', "if (state != State.ACTIVE || !releasing && engine.nanoTime() - deadlineNanos() >= 0) {", "if (state != State.ACTIVE || engine.nanoTime() - deadlineNanos() >= 0) {", "ConfirmRefreshReviewTest#aReleaseWaitingForARefreshAnsweredPastTheDeadlineIsNotReportedLost"),
 # (was 'LOST is final: a late 412 adoption does not confirm a lost lease', on LeaseKeeper's own state check after the 412's
 # read: that check went into GcsLease#confirmRefresh, one step with the loss; the same test pins it there)
 ("LOST is final: a late 412 adoption does not confirm a lost lease", E+'GcsLease.java', "if (state != State.ACTIVE || !releasing && engine.nanoTime() - deadlineNanos() >= 0) {", "if (!releasing && engine.nanoTime() - deadlineNanos() >= 0 && state == State.ACTIVE) {", "RefreshCapacityTest#aRefreshThatMeets412AfterItsLeaseWasLostDoesNotReviveItOrReportARefresh"),
 ("rule 14: a second close() on a thread with its own create in flight does not wait for the first", E+'LeaseIssuer.java', "if (!createInFlightOnThisThread() && !release.releasingOnThisThread() && !ioLockHeldOnThisThread()) {", "if (!release.releasingOnThisThread() && !ioLockHeldOnThisThread()) {", "CloseDuringCreateTest#aCloseByTheCreatesListenerWhileAnotherCloseWaitsForThatCreateDoesNotHangForTheBound"),
 ("rule 14: a second close() waits for the release the first close() left to its own thread", E+'LeaseIssuer.java', "                awaitWorkTheFirstCloseLeftToItsOwnThread();\n", "", "ExplorerFindingsTest#aSecondCloseWaitsForTheReleaseInsideWhoseDeleteTheFirstCloseRan"),
 ("rule 14: a second close() on a thread holding a lease's I/O lock does not wait for the first", E+'LeaseIssuer.java', " && !ioLockHeldOnThisThread()) {", ") {", "SecondCloseReviewTest#aCloseByTheTransportInsideARenewalWhileTheFirstCloseReleasesThatLeaseDoesNotHang"),
 ("rule 14: close() does not wait for a release waiting for the I/O lock the closing thread holds", E+'LeaseRelease.java', "if (!lease.releasingOnThisThread() && !lease.ioHeldByCurrentThread()) {", "if (!lease.releasingOnThisThread()) {", "SecondCloseReviewTest#aFirstCloseByTheTransportInsideARenewalWhoseLeaseAnotherThreadReleasesDoesNotSitOutItsBound"),
 ("rule 12: a second release() waits until the first has begun its release", E+'LeaseRelease.java', "        if (!lease.outerHoldGivenBackOnThisThread()\n", "        if (false && !lease.outerHoldGivenBackOnThisThread()\n", "ReleaseInFlightTest#aSecondReleaseWaitsForAFirstThatGaveTheHoldBackButHasNotBegunYet"),
 ("rule 20: a refresh whose lease was released on its own thread tells no refreshFailed", E+'LeaseKeeper.java', "        if (lease.state() == GcsLease.State.RELEASED) {\n            // Released while", "        if (false) {\n            // Released while", "CloseOnARefresherThreadTest#aRefreshWhoseLeaseCloseReleasedInsideItsPatchTellsNoRefreshFailedAfterReleased"),
 ("rule 14: close() on a refresher thread does not interrupt the refresher's running tasks", E+'LeaseKeeper.java', "            if (!leaveRunningTasks) {\n                refreshers.shutdownNow();", "            if (true) {\n                refreshers.shutdownNow();", "CloseOnARefresherThreadTest#aCloseOnARefresherThreadDoesNotInterruptTheRefreshersOtherRunningRelease"),
 ("rule 14: a release() on a thread holding the lease's I/O lock does not wait for another thread's release of it", E+'LeaseRelease.java', "        if (lease.ioHeldByCurrentThread()) {\n            // This thread holds the lease's I/O lock", "        if (false) {\n            // This thread holds the lease's I/O lock", "WaitsThatCannotEndTest#aReleaseByTheTransportInsideARenewalDoesNotWaitForAReleaseWaitingForThatRenewal"),
 ("rule 14: a release() waits one bound in all for another thread's release", E+'LeaseRelease.java', "            awaitReleaseByAnotherThread(lease, deadline);", "            awaitReleaseByAnotherThread(lease, runtime.nanoTime() + releaseBound.toNanos());", "WaitsThatCannotEndTest#aReleaseWaitsForAnotherThreadsReleaseOneBoundInAll"),
 ("rule 14: close() on a thread holding an I/O lock does not wait for the refresher's running tasks", E+'LeaseIssuer.java', "            keeper.close(releaseBound, holdsAnIoLock);", "            keeper.close(releaseBound, false);", "WaitsThatCannotEndTest#aCloseByTheTransportInsideARenewalDoesNotWaitForTheRefreshersReleaseWaitingForThatRenewal"),
 ("rule 14: close() knows the I/O locks its thread holds, a released lease's too", E+'LeaseIssuer.java', "        return GcsLease.ioLockHeldOnThisThreadOfALeaseOf(this);", "        return holds.live().stream().anyMatch(GcsLease::ioHeldByCurrentThread);", "Review44Test#aCloseInsideARenewalWhoseLeaseItReleasedThereDoesNotWaitForARefreshWaitingForThatRenewal"),
 ("rule 17: a wait for a name whose holder's I/O lock this thread holds is refused at once", E+'Acquirer.java', "        if (budget > 0 && holds.holderWaitsForThisThread(slot)) {", "        if (false) {", "Review44Test#anAcquireInsideARenewalOfTheNameWhoseReleaseWaitsForThatRenewalDoesNotSitOutItsBudget"),
]
import re, time, shutil, glob
args = sys.argv[1:]
explorer = '--explorer' in args
def opt(name, default):
    if name in args:
        v = args[args.index(name) + 1]
        del args[args.index(name):args.index(name) + 2]
        return type(default)(v)
    return default
tries = opt('--tries', 4)
runs = opt('--runs', 20)
timeout = opt('--timeout', 900)
prepared = '--prepared' in args
control = opt('--control', 0)
batch = opt('--batch', '')
which = opt('--which', 'interleavings,api')  # --which interleavings | api | interleavings,api: the explorers run  # --batch a:b: the mutations a..b-1 of the list (0-based), for one slot call each
summary = '--summary' in args
if '--check' in args:
    # --check: no run; every mutation's pattern(s) must still be in its file (a pattern the engine's text no longer has
    # makes that mutation print MISSING PATTERN and measure nothing). Exit status 1 if one is missing. Used by .ci/run.
    missing = []
    for label, f, old, new, test in muts:
        olds = old if isinstance(old, list) else [old]
        files = f if isinstance(f, list) else [f] * len(olds)
        missing += [label for p, o in zip(files, olds) if o not in open(p).read()]
    for label in missing:
        print("MISSING PATTERN", label)
    print("%d mutations, %d with a missing pattern" % (len(muts), len(missing)))
    sys.exit(1 if missing else 0)
only = [a for a in args if a not in ('--explorer', '--prepared', '--summary')]
CORE = 'gcslock-core/'
WORK = os.path.abspath(CORE + 'target/explorer-catalogue') + '/'
EXPLORERS = ['io.github.gcslock.EngineInterleavingExplorerTest', 'io.github.gcslock.EngineExplorerPropertyTest']
# every targeted test: the pinning tests of the catalogue that live in an explorer class are left out of its run
PINNING = sorted({t for m in muts for t in [m[4]] if '#' in t and any(t.startswith(e.split('.')[-1] + '#') for e in EXPLORERS)})

def prepare():
    if not prepared:
        r = subprocess.run(['./mvnw','-B','-q','-o','-pl','gcslock-core','-am','test-compile',
                            'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath',
                            '-Dmdep.outputFile=target/test-classpath.txt','-Dmdep.includeScope=test'],
                           capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            sys.exit('the build failed:\n' + r.stdout[-3000:] + r.stderr[-3000:])
    deps = open(CORE + 'target/test-classpath.txt').read().strip()
    launcher = [j for j in glob.glob(os.path.expanduser('~/.m2/repository/org/junit/platform/junit-platform-launcher/*/*.jar'))]
    engine = [d for d in deps.split(':') if 'junit-platform-engine' in d][0]
    version = engine.split('/')[-2]
    launcher = [j for j in launcher if '/' + version + '/' in j and j.endswith(version + '.jar')][0]
    os.makedirs(WORK + 'launcher', exist_ok=True)
    subprocess.run(['javac','-nowarn','-d',WORK + 'launcher','-cp',deps + ':' + launcher,'dev/ExplorerCatalogue.java'], check=True)
    return deps + ':' + launcher + ':' + WORK + 'launcher'

def explorer_jvm(cp, selection, extra=()):
    cmd = ['java','-Xss1m','-cp',cp] + list(extra) + [
        '-Djqwik.tries.default=%d' % tries, '-Djqwik.shrinking.default=OFF', '-Djqwik.failures.after.default=RANDOM_SEED',
        '-Djqwik.database=' + WORK + 'jqwik-database', '-Dgcslock.explorer.randomSeeds=true', '-Dgcslock.explorer.runs=%d' % runs,
        'ExplorerCatalogue'] + selection + ['--exclude'] + PINNING
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=CORE)
        out = r.stdout
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b'').decode() if isinstance(e.stdout, bytes) else (e.stdout or '')
        return None, out
    m = re.search(r'^RESULT (.*)$', out, re.M)
    return (m.group(1) if m else None), out

def run_explorers(label, files, cp):
    mutant = WORK + 'mutant'
    shutil.rmtree(mutant, ignore_errors=True)
    os.makedirs(mutant)
    r = subprocess.run(['javac','-nowarn','-proc:none','--release','17','-implicit:none','-d',mutant,
                        '-cp',CORE + 'target/classes:' + cp] + sorted(set(files)), capture_output=True, text=True)
    if r.returncode != 0:
        return "DOES NOT COMPILE %s: %s" % (label, r.stderr[-400:].replace('\n', ' ')), False, None
    return mutant, True, None

def explore(label, mutant, cp):
    classes = os.path.abspath(CORE + 'target/test-classes') + ':' + os.path.abspath(CORE + 'target/classes') + ':' + cp
    started = time.time()
    chosen = [e for e in EXPLORERS if ('interleavings' in which and 'Interleaving' in e) or ('api' in which and 'Property' in e)]
    res, out = explorer_jvm(mutant + ':' + classes, chosen)
    wall = time.time() - started
    open(WORK + 'last-run.log', 'w').write(out)
    if res is None:
        return "NO RESULT %s (JVM ended without one or ran past %d s; see %slast-run.log)" % (label, timeout, WORK), False
    if res.startswith('NOT FOUND'):
        return "NOT FOUND %s (%s: interleavings %d runs per scenario, API %d tries; %.0f s)" % (label, which, runs, tries, wall), False
    f = res.split(' ', 6)  # FOUND class method secsInClass secsTotal why
    cls, method, secs, why = f[1], f[2], f[3], f[6] if len(f) > 6 else ''
    where = method
    if cls == 'EngineInterleavingExplorerTest':
        seed = re.search(r'seed (-?\d+)', why)
        if seed:
            where = '%s seed %s' % (method, seed.group(1))
            rep, _ = explorer_jvm(classes, ['io.github.gcslock.EngineInterleavingExplorerTest#' + method],
                                  ['-Dgcslock.explorer.seed=' + seed.group(1)])
            if rep is not None and rep.startswith('FOUND'):
                return "FALSE FIND %s by %s %s (fails unmutated too): %s" % (label, cls, where, why[:300]), False
    else:
        t = re.search(r'^tries = (\d+)', out, re.M) or re.search(r'world (\d+)', why)
        where = 'try %s of %d' % (t.group(1) if t else '?', tries)
    return "FOUND %s by %s %s after %s s (JVM %.0f s): %s" % (label, cls, where, secs, wall, why[:400]), True

LEDGER = 'dev/catalogue/'
ledger_file = None

def record(label, line):
    # one line per verdict: time, commit (+ if the tree had changes), label, verdict, explorers, runs, tries, detail
    global ledger_file
    if ledger_file is None:
        os.makedirs(LEDGER, exist_ok=True)
        ledger_file = LEDGER + time.strftime('%Y%m%dT%H%M%S', time.gmtime()) + '-%d.tsv' % os.getpid()
    rev = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no', '--', 'gcslock-core', 'gcslock-test'],
                           capture_output=True, text=True).stdout.strip()
    verdict = next(v for v in ('NOT FOUND', 'FOUND', 'FALSE FIND', 'NO RESULT', 'DOES NOT COMPILE') if line.startswith(v))
    detail = line[len(verdict):].strip()
    if detail.startswith(label):
        detail = detail[len(label):].strip()
    with open(ledger_file, 'a') as out:
        out.write('\t'.join([time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), rev + ('+' if dirty else ''), label, verdict,
                              which, str(runs), str(tries), detail.replace('\t', ' ').replace('\n', ' ')]) + '\n')

if summary:
    # the latest verdict per mutation and explorer set (--which); a mutation is FOUND if one set's latest verdict is
    latest_by = {}
    for path in sorted(glob.glob(LEDGER + '*.tsv')):
        for row in open(path):
            f = row.rstrip('\n').split('\t')
            key = (f[2], f[4]) if len(f) >= 8 else None
            if key and f[3] in ('FOUND', 'NOT FOUND') and (key not in latest_by or latest_by[key][0] <= f[0]):
                latest_by[key] = f
    latest = {}
    for (label, _), f in sorted(latest_by.items(), key=lambda kv: kv[1][0]):
        if label not in latest or f[3] == 'FOUND' or latest[label][3] != 'FOUND':
            latest[label] = f
    labels = [m[0] for m in muts if not only or any(o[1:] == m[0] if o.startswith('=') else o in m[0] for o in only)]
    measured = [l for l in labels if l in latest]
    hits = [l for l in measured if latest[l][3] == 'FOUND']
    for l in measured:
        f = latest[l]
        print('%-9s %s  (%s, %s, %s runs / %s tries: %s)' % (f[3], l, f[0][:10], f[1], f[5], f[6], f[7][:160]))
    for l in labels:
        if l not in latest:
            print('UNMEASURED %s' % l)
    print('LEDGER: %d of %d measured found (%.0f %%); %d of the %d mutations never measured' % (
        len(hits), len(measured), 100.0 * len(hits) / max(1, len(measured)), len(labels) - len(measured), len(labels)))
    sys.exit(0)

found = total = 0
cp = prepare() if explorer else None
if explorer and control:
    # --control K: the explorers K times on the unmutated engine first (each find there is a false alarm of the budget)
    os.makedirs(WORK + 'mutant', exist_ok=True)
    shutil.rmtree(WORK + 'mutant'); os.makedirs(WORK + 'mutant')
    for i in range(control):
        line, hit = explore('(control %d: no mutation)' % (i + 1), WORK + 'mutant', cp)
        print(time.strftime('%H:%M:%S ') + line, flush=True)
    if not only:
        muts = []
if batch:
    a, b = (int(x) if x else None for x in batch.split(':'))
    muts = muts[a:b]
for label, f, old, new, test in muts:
    if only and not any(o[1:] == label if o.startswith('=') else o in label for o in only): continue  # '=label': that one only
    olds, news = (old, new) if isinstance(old, list) else ([old], [new])
    files = f if isinstance(f, list) else [f] * len(olds)  # one file for all patterns, or one per pattern
    srcs = {p: open(p).read() for p in set(files)}
    mutated = dict(srcs)
    if any(o not in srcs[p] for p, o in zip(files, olds)):
        print("MISSING PATTERN", label); continue
    for p, o, n in zip(files, olds, news):
        mutated[p] = mutated[p].replace(o, n, 1)
    for p in mutated:
        open(p,'w').write(mutated[p])
    if explorer:
        try:
            mutant, ok, _ = run_explorers(label, set(files), cp)
        finally:
            for p in srcs:
                open(p,'w').write(srcs[p])
        if ok:
            line, hit = explore(label, mutant, cp)
        else:
            line, hit = mutant, False
        total += 1
        found += hit
        print(time.strftime('%H:%M:%S ') + line, flush=True)
        record(label, line)
        continue
    try:
        r = subprocess.run(['./mvnw','-B','-q','-o','-pl','gcslock-core','-am','test','-Dtest='+test,'-Dsurefire.failIfNoSpecifiedTests=false'], capture_output=True, text=True, timeout=600)
        out = r.stdout + r.stderr
        if r.returncode != 0 and ('COMPILATION ERROR' in out or 'Compilation failure' in out):
            print("COMPILE ERROR (not a kill) " + label + " -> " + test, flush=True)  # the tree does not build: no verdict
            continue
        print(("KILLED " if r.returncode != 0 else "SURVIVED ") + label + " -> " + test, flush=True)
    finally:
        for p in srcs:
            open(p,'w').write(srcs[p])
if explorer and total:
    print("EXPLORER CATALOGUE: found %d of %d (%.0f %%); interleavings %d runs per scenario, API explorer %d tries" % (found, total, 100.0 * found / total, runs, tries), flush=True)
