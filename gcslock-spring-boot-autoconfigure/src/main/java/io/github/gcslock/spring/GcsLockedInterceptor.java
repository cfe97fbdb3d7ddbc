package io.github.gcslock.spring;

import io.github.gcslock.Lease;
import io.github.gcslock.LockOwner;
import io.github.gcslock.LockRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.MethodClassKey;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Runs {@link GcsLocked} methods under their lock: acquire, run, release in {@code finally}. Ordered
 * outside {@code @Transactional}, so a transaction commits before the lock is given up.
 *
 * <p>Three parts: {@link LockedMethod} reads what the annotation asks for (with {@link LockNameResolver}
 * for the lock name of each call), {@link IfLockedPolicy} takes the lock as the {@link IfLocked} mode says,
 * and this class runs the method in its shape (a plain result, a {@link CompletionStage} held until it
 * completes, a Reactor publisher held until it terminates) and gives the lock back after
 * {@code holdAtLeast}.
 *
 * <p>Who owns a call's hold (rule 17 of the engine's design): a method with a plain result holds the lock for
 * its thread (a nested {@code @GcsLocked} call of the same name on that thread is reentrant); a method returning
 * a {@link CompletionStage} or a Reactor publisher holds it for that one invocation (one subscription), since its
 * work finishes on other threads: a second call while it runs finds the lock held — from the same thread, from a
 * pooled thread that ran the first one's code, or by subscribing to the same publisher again.
 */
public class GcsLockedInterceptor implements MethodInterceptor {

    /** Reactor is optional: Mono/Flux results are handled only when it is on the class path. */
    private static final boolean REACTOR_PRESENT =
            ClassUtils.isPresent("reactor.core.publisher.Mono", GcsLockedInterceptor.class.getClassLoader());

    private final ObjectProvider<LockRegistry> registry;
    private final Environment environment;
    private final BeanFactory beanFactory;
    private final IfLockedPolicy policy;
    private final Map<MethodClassKey, LockedMethod> cache = new ConcurrentHashMap<>();

    /**
     * @param registry    the registry that takes the locks, looked up on each call
     * @param environment resolves placeholders in lock names and durations
     * @param beanFactory resolves {@code @bean} references in SpEL lock names; may be null
     * @param events      where {@link GcsLockSkippedEvent}s go
     * @param defaultWait the wait of SKIP and FAIL methods without a {@code maxWait} ({@code gcslock.wait})
     */
    public GcsLockedInterceptor(ObjectProvider<LockRegistry> registry, Environment environment, BeanFactory beanFactory,
                                ApplicationEventPublisher events, Duration defaultWait) {
        this(registry, environment, beanFactory, events, defaultWait, null);
    }

    /**
     * @param defaultWait      the wait of SKIP and FAIL methods without a {@code maxWait} ({@code gcslock.wait})
     * @param acquireListeners told how each call's acquisition ended, per mode (e.g. the {@code gcslock.acquire}
     *                         meter); looked up on each call, so they may be created after this interceptor; may be null
     */
    public GcsLockedInterceptor(ObjectProvider<LockRegistry> registry, Environment environment, BeanFactory beanFactory,
                                ApplicationEventPublisher events, Duration defaultWait,
                                ObjectProvider<GcsLockedAcquireListener> acquireListeners) {
        this(registry, environment, beanFactory, events, () -> defaultWait, acquireListeners);
    }

    /**
     * @param defaultWait      the wait of SKIP and FAIL methods without a {@code maxWait} ({@code gcslock.wait}),
     *                         asked for on each such call, so that it may come from a bean created after this interceptor
     * @param acquireListeners told how each call's acquisition ended, per mode (e.g. the {@code gcslock.acquire}
     *                         meter); looked up on each call, so they may be created after this interceptor; may be null
     */
    public GcsLockedInterceptor(ObjectProvider<LockRegistry> registry, Environment environment, BeanFactory beanFactory,
                                ApplicationEventPublisher events, Supplier<Duration> defaultWait,
                                ObjectProvider<GcsLockedAcquireListener> acquireListeners) {
        this.registry = registry;
        this.environment = environment;
        this.beanFactory = beanFactory;
        this.policy = new IfLockedPolicy(defaultWait, this, events, acquireListeners);
    }

    /** Where failed GCS calls are reported (for the {@code gcsLock} health and the "reachable again" log line). */
    public void setReachability(ObjectProvider<GcsReachability> reachability) {
        policy.setReachability(reachability);
    }

    /** The waits in progress, ended when the application context closes (see {@link GcsLockedWaits}). */
    public void setWaits(ObjectProvider<GcsLockedWaits> waits) {
        policy.setWaits(waits);
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Class<?> targetClass = invocation.getThis() != null ? AopUtils.getTargetClass(invocation.getThis()) : null;
        LockedMethod spec = cache.computeIfAbsent(new MethodClassKey(invocation.getMethod(), targetClass),
                k -> LockedMethod.of(invocation.getMethod(), targetClass, environment));
        String name = spec.name().resolve(invocation.getThis(), invocation.getArguments(), beanFactory);
        LockRegistry locks = registry.getObject();
        Class<?> returnType = spec.method().getReturnType();
        if (REACTOR_PRESENT && ReactiveLocking.handles(returnType)) {
            return invokeReactive(invocation, spec, name, locks, returnType);
        }
        // A stage's work goes on after the method returns, on other threads: the hold is this invocation's, so that
        // the calling thread's next call (the next tick of a single-thread scheduler) finds it held. A plain call
        // holds for its thread — or, made in the synchronous part of an invocation that holds the name (a future's
        // body before it returns, a publisher's assembly), re-enters that invocation's hold (rule 17).
        boolean returnsStage = CompletionStage.class.isAssignableFrom(returnType);
        if (returnsStage && spec.ifLocked() == IfLocked.WAIT && GcsLocks.inside(name)) {
            throw selfWait(name, spec);
        }
        LockOwner owner = returnsStage ? LockOwner.newInvocation(LockNameResolver.describe(spec.method()))
                : GcsLocks.invocationHolding(name);
        // A plain call inside a hold of its name on this thread re-enters it: no wait, whatever its mode.
        Lease lease = policy.acquireOrSkip(locks, name, spec, owner, !returnsStage && GcsLocks.inside(name));
        if (lease == null) {
            return emptyResult(returnType);
        }
        long started = System.nanoTime();
        GcsLocks.push(lease, owner);
        boolean handedOver = false;
        try {
            Object result = invocation.proceed();
            if (result instanceof CompletionStage<?> stage && CompletionStage.class.isAssignableFrom(returnType)) {
                // The work goes on after the method returns: hold the lock until its stage completes.
                Object view = holdUntilComplete(stage, returnType, () -> release(locks, lease, spec, started),
                        () -> policy.pendingReleases().begin(locks, name));
                handedOver = true;
                return view;
            }
            return result;
        } finally {
            GcsLocks.pop();
            if (!handedOver) {
                release(locks, lease, spec, started);
            }
        }
    }

    /**
     * A future or publisher call with WAIT made on a thread inside a hold of the same name (its own plain hold, or
     * the synchronous part of an invocation that holds it): that hold cannot end while this call waits for it.
     */
    private static IllegalStateException selfWait(String name, LockedMethod spec) {
        return new IllegalStateException("@GcsLocked " + LockNameResolver.describe(spec.method()) + ": lock '" + name
                + "' is held by the calling thread (" + Thread.currentThread().getName() + "), so this WAIT call would "
                + "wait for a hold that cannot end while it waits; a future or publisher call is not reentrant into it: "
                + "make it outside that hold, call a plain method, or use SKIP or FAIL");
    }

    /**
     * Gives the lock back now, or after what is left of {@code holdAtLeast} — at once if the lease was lost
     * (nothing is held any more, and a lost lease kept until then would keep the health DOWN for no reason).
     */
    private static void release(LockRegistry locks, Lease lease, LockedMethod spec, long startedNanos) {
        Duration remaining = spec.holdAtLeast().minusNanos(System.nanoTime() - startedNanos);
        if (remaining.isNegative() || remaining.isZero() || lease.lostReason().isPresent()) {
            lease.release();
        } else {
            locks.releaseAfter(lease, remaining);
        }
    }

    /**
     * What the caller of a method returning a {@link CompletionStage} gets: a future that completes like the
     * method's stage, but only after the lock was given back (so the caller's next step never finds it still
     * held). Cancelling it returns control to the caller at once; it does not cancel the method's own future,
     * because cancelling a {@code CompletableFuture} never stops the work behind it: the lock is held until the
     * method's future completes (the work ended). A caller who gave up that way (cancelled, or completed the
     * returned future itself: {@code orTimeout}, {@code completeOnTimeout}) does not wait for the release: the
     * release is pending ({@link PendingReleases}) while it runs, so that the caller's next call of the name, once the
     * work ended, is not skipped or refused by it. A declared subtype of {@code CompletableFuture} cannot be
     * replaced; the lock is then released when that future completes.
     *
     * @param pending begins a release that the caller does not wait for (see {@link PendingReleases})
     */
    static Object holdUntilComplete(CompletionStage<?> stage, Class<?> declared, Runnable release,
                                    Supplier<CompletableFuture<Void>> pending) {
        if (!declared.isAssignableFrom(CompletableFuture.class)) {
            stage.whenComplete((value, error) -> release.run());
            return stage;
        }
        View view = new View(pending);
        stage.whenComplete((value, error) -> {
            view.releaseBegins();
            try {
                release.run();
            } finally {
                view.released(value, error);
            }
        });
        return view;
    }

    /**
     * The future a stage method's caller gets. Completed by the caller before the lock was given back (a cancel, or
     * its own completion), the release is pending from that moment, or from the moment it begins if the work still
     * runs then (calls of the name made while the work runs find it held: the work goes on), until it ended.
     */
    private static final class View extends CompletableFuture<Object> {
        private final Supplier<CompletableFuture<Void>> pending;
        private boolean callerLeft;
        private boolean releasing;
        private boolean released;
        /** The pending release, once the caller left and the release began: ends when the release ended. */
        private CompletableFuture<Void> awaited;

        View(Supplier<CompletableFuture<Void>> pending) {
            this.pending = pending;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return left(super.cancel(mayInterruptIfRunning));
        }

        @Override
        public boolean complete(Object value) {
            return left(super.complete(value));
        }

        @Override
        public boolean completeExceptionally(Throwable ex) {
            return left(super.completeExceptionally(ex));
        }

        /** Heard on the caller's thread before its cancel (or completion) returns. */
        private synchronized boolean left(boolean byCaller) {
            if (byCaller) {
                callerLeft = true;
                if (releasing && !released) {
                    begin();
                }
            }
            return byCaller;
        }

        /** The work ended: its lock is being given back. */
        synchronized void releaseBegins() {
            releasing = true;
            if (callerLeft) {
                begin();
            }
        }

        /** The lock was given back (or handed to holdAtLeast's delay): the caller is told, unless it left. */
        void released(Object value, Throwable error) {
            synchronized (this) {
                released = true;
                if (awaited != null) {
                    awaited.complete(null);
                }
            }
            if (error != null) {
                super.completeExceptionally(error);
            } else {
                super.complete(value);
            }
        }

        private void begin() {
            if (awaited == null) {
                awaited = pending.get();
            }
        }
    }

    /**
     * A method returning a Mono or Flux: nothing happens until subscription; then the lock is taken (on
     * Reactor's bounded-elastic scheduler, so WAIT never blocks the subscriber's thread) for that subscription
     * (an invocation owner, see {@link ReactiveLocking}), the method is invoked, and the lock is held until the
     * publisher completes, fails or is cancelled.
     */
    private Object invokeReactive(MethodInvocation invocation, LockedMethod spec, String name, LockRegistry locks,
                                  Class<?> returnType) {
        record Held(Lease lease, long startedNanos, LockOwner owner) {
        }
        return ReactiveLocking.lockFor(returnType, name, LockNameResolver.describe(spec.method()),
                () -> spec.ifLocked() == IfLocked.WAIT && GcsLocks.inside(name) ? selfWait(name, spec) : null,
                (owner, nested, madeInside) -> {
                    Lease lease = policy.acquireOrSkip(locks, name, spec, owner, nested, madeInside);
                    return lease == null ? null : new Held(lease, System.nanoTime(), owner);
                },
                Held::lease,
                held -> {
                    // Once per subscription, as Spring's reactive transactions do. The method's own code (the
                    // assembly of its publisher) runs inside the subscription's hold: a plain call of the name there re-enters it.
                    MethodInvocation call = invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone() : invocation;
                    GcsLocks.push(held.lease(), held.owner());
                    try {
                        return call.proceed();
                    } catch (RuntimeException | Error e) {
                        throw e;
                    } catch (Throwable t) {
                        throw new UndeclaredThrowableException(t);
                    } finally {
                        GcsLocks.pop();
                    }
                },
                held -> release(locks, held.lease(), spec, held.startedNanos()),
                ownCode -> policy.pendingReleases().begin(locks, name, ownCode));
    }

    /** What a skipped method returns: null, an empty Optional, or a primitive's zero. */
    static Object emptyResult(Class<?> type) {
        if (CompletionStage.class.isAssignableFrom(type) && type.isAssignableFrom(CompletableFuture.class)) {
            return CompletableFuture.completedFuture(null);
        }
        if (REACTOR_PRESENT && ReactiveLocking.handles(type)) {
            return ReactiveLocking.empty(type);
        }
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (type == OptionalInt.class) {
            return OptionalInt.empty();
        }
        if (type == OptionalLong.class) {
            return OptionalLong.empty();
        }
        if (type == OptionalDouble.class) {
            return OptionalDouble.empty();
        }
        if (!type.isPrimitive() || type == void.class) {
            return null;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == char.class) {
            return '\0';
        }
        if (type == byte.class) {
            return (byte) 0;
        }
        if (type == short.class) {
            return (short) 0;
        }
        if (type == int.class) {
            return 0;
        }
        if (type == long.class) {
            return 0L;
        }
        if (type == float.class) {
            return 0f;
        }
        return 0d;
    }
}
