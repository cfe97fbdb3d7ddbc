#!/usr/bin/env python3
# Re-introduces, one at a time, the defects that the Spring layer's fixes removed (issue 20's review rounds, issue 26)
# and runs InvocationOwnershipPropertyTest ALONE against each: its power is the share it KILLS.
# Run from the repository root (through /work/bin/slot on the shared machine):
#   python3 dev/spring-mutations.py [label...]        tries per mutation: -t N (default 100)
import subprocess, sys, os, shutil
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
S = 'gcslock-spring-boot-autoconfigure/src/main/java/io/github/gcslock/spring/'
muts = [
 # 94539a3 (issue 20): one invocation, one hold
 ("future: the hold is the calling thread's (94539a3)", S+'GcsLockedInterceptor.java',
  "LockOwner owner = returnsStage ? LockOwner.newInvocation(LockNameResolver.describe(spec.method()))", "LockOwner owner = returnsStage ? null"),
 ("publisher: the hold is the pooled thread's (94539a3)", S+'ReactiveLocking.java',
  "return attempt.acquired(acquire.apply(attempt.owner), release);", "return attempt.acquired(acquire.apply(null), release);"),
 ("publisher: one owner per call, not per subscription: re-subscription re-enters (94539a3)", S+'ReactiveLocking.java',
  ["        Mono<Attempt<H>> held = Mono.deferContextual(ctx -> {", "new Attempt<>(enclosing != null ? enclosing : LockOwner.newInvocation(method));"],
  ["        LockOwner shared = LockOwner.newInvocation(method);\n        Mono<Attempt<H>> held = Mono.deferContextual(ctx -> {", "new Attempt<>(enclosing != null ? enclosing : shared);"]),
 ("publisher: a nested publisher in the holder's chain is not reentrant (94539a3)", S+'ReactiveLocking.java',
  "        return owners.get(name);", "        return null;"),
 ("publisher: a lock taken after the subscriber left is kept (94539a3)", S+'ReactiveLocking.java',
  "            if (cancelled) {\n                release.accept(h);\n                return null;\n            }", "            if (cancelled) {\n                return null;\n            }"),
 # Nearly equivalent on Reactor 3.8 (it survives): a lock taken but not adopted when the cancel comes still reaches
 # usingWhen, whose ResourceSubscriber.onNext does not look at the cancel; the closure finds the attempt cancelled
 # (adopt() false), and usingWhen's cancel cleanup (giveBackOnCancel, the attempt's resource still set) gives it
 # back. It is lost only if the cancel lands between the acquisition callable setting the resource and
 # MonoSubscribeOnCallable's cancelled-state check after the callable returns (it then drops the value): a window
 # inside gcslock's callable and Reactor's run() that no hook reaches; the test's hand-over hook (after that check)
 # is where its cancels land, and there usingWhen's cleanup releases the lock.
 ("publisher: a lock taken but not yet adopted is kept on cancel (94539a3)", S+'ReactiveLocking.java',
  "            if (resource != null && !adopted) {\n                release.accept(resource);", "            if (resource != null && !adopted) {\n                resource.hashCode();"),
 ("publisher: each subscription invokes the used invocation, not a clone (94539a3)", S+'GcsLockedInterceptor.java',
  "MethodInvocation call = invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone() : invocation;", "MethodInvocation call = invocation;"),
 ("future: the caller's view completes before the release", S+'GcsLockedInterceptor.java',
  "        stage.whenComplete((value, error) -> {\n            view.releaseBegins();\n            try {\n                release.run();", "        stage.whenComplete((value, error) -> {\n            view.releaseBegins();\n            try {\n                CompletableFuture.runAsync(release);"),
 # ef04840: health bookkeeping from the request events
 ("health: a failed request is not an outage (ef04840)", S+'GcsReachability.java',
  "            failed(outcome.error(), outcome.sequence());", "            outcome.hashCode();"),
 ("health: an answered request does not end an outage (ef04840)", S+'GcsReachability.java',
  "            reached(outcome.sequence());", "            outcome.hashCode();"),
 ("health: ignores the request's stamp, follows the order outcomes are told (issue 26, ReachabilityEventOrderTest)", S+'GcsReachability.java',
  ["            reached(outcome.sequence());", "            failed(outcome.error(), outcome.sequence());"],
  ["            reached();", "            failed(outcome.error());"]),
 ("health: a call that sent no request (skipped here, reentrant) flips it UP (ef04840)", S+'IfLockedPolicy.java',
  "        if (lease == null) {\n            // Who holds it", "        if (tracker() != null) {\n            tracker().reached();\n        }\n        if (lease == null) {\n            // Who holds it"),
 # 951b111: shutdown ends waits (the property test's ShutdownAction closes an instance's context)
 ("shutdown: waits are not ended when the context closes (951b111)", S+'IfLockedPolicy.java',
  "        if (tracked == null || wait.isZero()) {", "        if (true) {"),
 # 94539a3: start-up refuses final methods (the property test's StartUpAction starts beans of each class shape)
 ("start-up: final methods are not refused (94539a3)", S+'GcsLockedNameChecker.java',
  "        if (Modifier.isFinal(modifiers) && !viaInterface) {", "        if (false) {"),
 # issue 26
 ("26: a cancelled future's work still runs, its hold is released at the cancel", S+'GcsLockedInterceptor.java',
  "        return view;\n    }", "        view.whenComplete((value, error) -> {\n            if (view.isCancelled() && stage instanceof java.util.concurrent.Future<?> work) {\n                work.cancel(true);\n            }\n        });\n        return view;\n    }"),
 ("26: a call does not wait for the release of a cancelled subscription", S+'IfLockedPolicy.java',
  "            pendingReleases.awaitReleases(locks, name, madeInside);", "            name.hashCode();"),
 ("26: a plain call in an invocation's synchronous part is not reentrant", S+'GcsLockedInterceptor.java',
  "                : GcsLocks.invocationHolding(name);", "                : null;"),
 ("26: a future WAIT inside a hold of its thread waits for itself", S+'GcsLockedInterceptor.java',
  "if (returnsStage && spec.ifLocked() == IfLocked.WAIT && GcsLocks.inside(name)) {", "if (false) {"),
 ("26: a publisher WAIT subscribed inside a hold of its thread waits for itself", S+'GcsLockedInterceptor.java',
  "() -> spec.ifLocked() == IfLocked.WAIT && GcsLocks.inside(name) ? selfWait(name, spec) : null,", "() -> null,"),
 ("26: an acquisition that fails as its subscriber leaves is dropped (ERROR log)", S+'ReactiveLocking.java',
  "                            return attempt.failed(e);", "                            throw e;"),
 ("26: a failed acquisition is signalled on its way to usingWhen (dropped, ERROR, if the subscriber left meanwhile)", S+'ReactiveLocking.java',
  "                    .doOnCancel(() -> attempt.cancelled(release, pending));",
  "                    .doOnCancel(() -> attempt.cancelled(release, pending))\n                    .flatMap(a -> a.failure != null ? Mono.<Attempt<H>>error(a.failure) : Mono.just(a));"),
 ("26: holdAtLeast keeps a lost lease", S+'GcsLockedInterceptor.java',
  " || lease.lostReason().isPresent()) {", ") {"),
 # 8652886 (gcslock-core, the health of the Spring layer hears it): a listing's later pages through the unreporting client
 ("health: a listing's later pages are fetched by the unreporting client (8652886)", 'gcslock-core/src/main/java/io/github/gcslock/LockStore.java',
  "        Page<Blob> page = storage.list(bucket, Storage.BlobListOption.prefix(prefix));\n",
  "        Page<Blob> page = storage.list(bucket, Storage.BlobListOption.prefix(prefix));\n        page.iterateAll().forEach(blobs::add);\n        blobs.forEach(this::observe);\n        if (blobs != null) {\n            return blobs;\n        }\n"),
 # 6d692f9 and ac3625b (issue 26, found by the long run of InvocationOwnershipPropertyTest)
 ("26: a cancel is heard only inside usingWhen (none pending while the method's own code runs or a completion's release runs) (6d692f9)",
  S+'ReactiveLocking.java',
  ["                        .doOnCancel(() -> cancelRequested(subscription, pending));", "                    .doOnCancel(() -> cancelRequested(subscription, pending));"],
  ["                        ;", "                    ;"]),
 ("26: a nested call that re-enters its hold waits as its mode says (skipped once the context closes) (ac3625b)", S+'IfLockedPolicy.java',
  "        if (reentrant) {\n            // Re-enters its owner's hold at once", "        if (false) {\n            // Re-enters its owner's hold at once"),
 # issue 26, second long run: a cancelled future's release
 ("26: the release of a future its caller cancelled is not pending (its next call, once the work ended, finds it)",
  S+'GcsLockedInterceptor.java',
  "                awaited = pending.get();", "                awaited = new CompletableFuture<>();"),
 ("26: a publisher the method's own code blocks on waits for its enclosing subscription's release (30 s)",
  S+'PendingReleases.java',
  "if (madeInside != null && release.ownCode().get() == madeInside && LockSupport.getBlocker(madeInside) != null) {",
  "if (false) {"),
 # issue 26, third long run: a cancel heard in pieces (gcslock's outer operator, then usingWhen)
 ("26: a cancel heard before the acquisition began does not stop it (usingWhen hears it late: the next call finds its hold)",
  S+'ReactiveLocking.java',
  "            if (!started) {\n                cancelled = true;\n                over();\n                return;\n            }\n            cancelRequested(pending);",
  "            cancelRequested(pending);"),
 # issue 26, class (a) of the long runs: a refusal whose subscriber left on its way out of usingWhen
 ("26: an acquisition failure is signalled after gcslock heard its subscriber leave (Reactor drops it: ERROR)",
  S+'ReactiveLocking.java',
  "            if (left) {\n                return false;\n            }\n            told = true;",
  "            told = true;"),
]
args = sys.argv[1:]
tries = '100'
if '-t' in args:
    i = args.index('-t'); tries = args[i + 1]; del args[i:i + 2]
killed = survived = 0
for label, f, old, new, *rest in muts:
    if args and not any(o in label for o in args): continue
    src = open(f).read()
    olds, news = (old, new) if isinstance(old, list) else ([old], [new])
    if any(o not in src for o in olds):
        print("MISSING PATTERN", label, flush=True); continue
    mutated = src
    for o, n in zip(olds, news):
        mutated = mutated.replace(o, n, 1)
    open(f, 'w').write(mutated)
    shutil.rmtree('gcslock-spring-boot-autoconfigure/target/jqwik-database', ignore_errors=True)
    try:
        r = subprocess.run(['./mvnw', '-B', '-q', '-o', '-pl', 'gcslock-spring-boot-autoconfigure', '-am', 'test',
                            '-Dtest=InvocationOwnershipPropertyTest', '-Dsurefire.failIfNoSpecifiedTests=false',
                            '-Djqwik.tries.default=' + tries], capture_output=True, text=True, timeout=1200)
        out = r.stdout + r.stderr
        if r.returncode != 0 and 'COMPILATION ERROR' in out:
            print("COMPILE ERROR " + label, flush=True); continue
        lines = out.splitlines()
        first = ''
        for i, l in enumerate(lines):
            if 'java.lang.AssertionError' in l or 'waited 10 s' in l or 'never returned' in l:
                first = l.split('AssertionError:', 1)[-1].strip() or (lines[i + 1].strip() if i + 1 < len(lines) else '')
                break
        if r.returncode != 0:
            killed += 1
        else:
            survived += 1
        print(("KILLED " if r.returncode != 0 else "SURVIVED ") + label + (" | " + first[:300] if first else ""), flush=True)
    finally:
        open(f, 'w').write(src)
print("killed %d of %d" % (killed, killed + survived), flush=True)
