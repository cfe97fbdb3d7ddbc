package io.github.gcslock.spring;

import io.github.gcslock.GcsLockException;
import io.github.gcslock.Lease;
import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.LockRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs {@link GcsLocked} methods under their lock: acquire, run, release in {@code finally}. Ordered
 * outside {@code @Transactional}, so a transaction commits before the lock is given up.
 */
public class GcsLockedInterceptor implements MethodInterceptor {

    private static final Logger log = LoggerFactory.getLogger(GcsLockedInterceptor.class);
    private static final Duration NO_LIMIT = Duration.ofDays(365 * 100L);
    /** Reactor is optional: Mono/Flux results are handled only when it is on the class path. */
    private static final boolean REACTOR_PRESENT =
            org.springframework.util.ClassUtils.isPresent("reactor.core.publisher.Mono", GcsLockedInterceptor.class.getClassLoader());

    private final ObjectProvider<LockRegistry> registry;
    private final Environment environment;
    private final BeanFactory beanFactory;
    private final ApplicationEventPublisher events;
    private final Duration defaultWait;
    private final Map<MethodClassKey, LockedMethod> cache = new ConcurrentHashMap<>();
    private final Set<Method> skippedOnce = ConcurrentHashMap.newKeySet();
    private volatile ObjectProvider<GcsReachability> reachability;
    private final ObjectProvider<GcsLockedAcquireListener> acquireListeners;

    public GcsLockedInterceptor(ObjectProvider<LockRegistry> registry, Environment environment, BeanFactory beanFactory,
                                ApplicationEventPublisher events, Duration defaultWait) {
        this(registry, environment, beanFactory, events, defaultWait, null);
    }

    /**
     * @param acquireListeners told how each call's acquisition ended, per mode (e.g. the {@code gcslock.acquire}
     *                         meter); looked up on each call, so they may be created after this interceptor; may be null
     */
    public GcsLockedInterceptor(ObjectProvider<LockRegistry> registry, Environment environment, BeanFactory beanFactory,
                                ApplicationEventPublisher events, Duration defaultWait,
                                ObjectProvider<GcsLockedAcquireListener> acquireListeners) {
        this.registry = registry;
        this.environment = environment;
        this.beanFactory = beanFactory;
        this.events = events;
        this.defaultWait = defaultWait;
        this.acquireListeners = acquireListeners;
    }

    /** Where failed GCS calls are reported (for the {@code gcsLock} health and the "reachable again" log line). */
    public void setReachability(ObjectProvider<GcsReachability> reachability) {
        this.reachability = reachability;
    }

    /** What one annotated method asks for, parsed once. */
    private record LockedMethod(LockNameResolver name, IfLocked ifLocked, Duration maxWait, Duration holdAtLeast,
                                Method method) {
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Class<?> targetClass = invocation.getThis() != null ? AopUtils.getTargetClass(invocation.getThis()) : null;
        LockedMethod spec = cache.computeIfAbsent(new MethodClassKey(invocation.getMethod(), targetClass),
                k -> parse(invocation.getMethod(), targetClass));
        String name = spec.name.resolve(invocation.getThis(), invocation.getArguments(), beanFactory);
        LockRegistry locks = registry.getObject();
        Class<?> returnType = spec.method.getReturnType();
        if (REACTOR_PRESENT && ReactiveLocking.handles(returnType)) {
            return invokeReactive(invocation, spec, name, locks, returnType);
        }
        Lease lease = acquireOrSkip(locks, name, spec);
        if (lease == null) {
            return emptyResult(returnType);
        }
        long started = System.nanoTime();
        GcsLocks.push(lease);
        boolean handedOver = false;
        try {
            Object result = invocation.proceed();
            if (result instanceof CompletionStage<?> stage && CompletionStage.class.isAssignableFrom(returnType)) {
                // The work goes on after the method returns: hold the lock until its stage completes.
                Object view = holdUntilComplete(stage, returnType, () -> release(locks, lease, spec, started));
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

    /** Gives the lock back now, or after what is left of {@code holdAtLeast}. */
    private static void release(LockRegistry locks, Lease lease, LockedMethod spec, long startedNanos) {
        Duration remaining = spec.holdAtLeast.minusNanos(System.nanoTime() - startedNanos);
        if (remaining.isNegative() || remaining.isZero()) {
            lease.release();
        } else {
            locks.releaseAfter(lease, remaining);
        }
    }

    /**
     * What the caller of a method returning a {@link CompletionStage} gets: a future that completes like the
     * method's stage, but only after the lock was given back (so the caller's next step never finds it still
     * held). Cancelling it cancels the method's future, which releases the lock. A declared subtype of
     * {@code CompletableFuture} cannot be replaced; the lock is then released when that future completes.
     */
    static Object holdUntilComplete(CompletionStage<?> stage, Class<?> declared, Runnable release) {
        if (!declared.isAssignableFrom(CompletableFuture.class)) {
            stage.whenComplete((value, error) -> release.run());
            return stage;
        }
        CompletableFuture<Object> view = new CompletableFuture<>();
        stage.whenComplete((value, error) -> {
            try {
                release.run();
            } finally {
                if (error != null) {
                    view.completeExceptionally(error);
                } else {
                    view.complete(value);
                }
            }
        });
        view.whenComplete((value, error) -> {
            if (view.isCancelled() && stage instanceof Future<?> work) {
                work.cancel(true);
            }
        });
        return view;
    }

    /**
     * A method returning a Mono or Flux: nothing happens until subscription; then the lock is taken (on
     * Reactor's bounded-elastic scheduler, so WAIT never blocks the subscriber's thread), the method is
     * invoked, and the lock is held until the publisher completes, fails or is cancelled.
     */
    private Object invokeReactive(MethodInvocation invocation, LockedMethod spec, String name, LockRegistry locks,
                                  Class<?> returnType) {
        record Held(Lease lease, long startedNanos) {
        }
        return ReactiveLocking.lockFor(returnType,
                () -> {
                    Lease lease = acquireOrSkip(locks, name, spec);
                    return lease == null ? null : new Held(lease, System.nanoTime());
                },
                Held::lease,
                () -> {
                    // Once per subscription, as Spring's reactive transactions do.
                    MethodInvocation call = invocation instanceof ProxyMethodInvocation proxied ? proxied.invocableClone() : invocation;
                    try {
                        return call.proceed();
                    } catch (Exception | Error e) {
                        throw e;
                    } catch (Throwable t) {
                        throw new java.lang.reflect.UndeclaredThrowableException(t);
                    }
                },
                held -> release(locks, held.lease(), spec, held.startedNanos()));
    }

    /**
     * Takes the lock as the mode says; null when the call is skipped (held elsewhere, or GCS could not be asked
     * in SKIP mode), after logging and publishing that. Throws for FAIL, a WAIT that ran out, or an outage.
     */
    private Lease acquireOrSkip(LockRegistry locks, String name, LockedMethod spec) {
        Lease lease;
        try {
            lease = acquireReporting(locks, name, spec);
        } catch (GcsLockException e) {
            if (e instanceof GcsLockInterruptedException) {
                throw e; // not an outage: the caller's thread is being stopped
            }
            if (e instanceof LockNotAcquiredException && e.getCause() == null) {
                throw e; // held elsewhere (FAIL, or WAIT ran out): the caller asked for the exception
            }
            // GCS could not be asked: it is unknown whether the lock is free, so the method must not run.
            GcsReachability tracker = reachability != null ? reachability.getIfAvailable() : null;
            GcsReachability.Outage outage = tracker != null ? tracker.failed(e) : null;
            if (spec.ifLocked != IfLocked.SKIP) {
                throw e;
            }
            // One line per failed run instead of the scheduler's ERROR with the whole cause chain.
            log.warn("@GcsLocked {} did not run: {}{}", LockNameResolver.describe(spec.method), GcsReachability.describe(e),
                    outage == null ? "" : " [GCS calls failing since " + outage.since() + ", " + outage.failures() + " failure(s)]");
            log.debug("@GcsLocked {}: lock '{}' could not be asked for", LockNameResolver.describe(spec.method), name, e);
            return null;
        }
        GcsReachability tracker = reachability != null ? reachability.getIfAvailable() : null;
        if (tracker != null) {
            tracker.reached(); // GCS answered (the lock was taken, or is held elsewhere)
        }
        if (lease == null) {
            if (skippedOnce.add(spec.method)) {
                log.info("@GcsLocked {}: lock '{}' is held elsewhere, so this run is skipped (logged once per method; "
                        + "later skips at DEBUG, counted by the gcslock.acquire meter, outcome=skipped)",
                        LockNameResolver.describe(spec.method), name);
            } else {
                log.debug("@GcsLocked {}: lock '{}' is held elsewhere, skipped", LockNameResolver.describe(spec.method), name);
            }
            publishSkipped(name, spec.method);
            return null;
        }
        return lease;
    }

    /**
     * Acquires as the mode says and tells the acquire listeners the outcome in the mode's terms. An
     * interrupt while waiting becomes {@link GcsLockInterruptedException} with the flag set again: the
     * annotated method does not declare {@code InterruptedException}, so rethrowing it would reach the
     * caller as an {@code UndeclaredThrowableException} and lose the interrupt.
     */
    private Lease acquireReporting(LockRegistry locks, String name, LockedMethod spec) {
        List<GcsLockedAcquireListener> listeners = acquireListeners == null ? List.of()
                : acquireListeners.orderedStream().toList();
        for (GcsLockedAcquireListener l : listeners) {
            tell(() -> l.acquiring(name));
        }
        long start = System.nanoTime();
        String outcome = "error";
        try {
            Lease lease = acquire(locks, name, spec);
            outcome = lease != null ? "acquired" : "skipped";
            return lease;
        } catch (LockNotAcquiredException e) {
            if (e.getCause() == null) {
                outcome = spec.ifLocked == IfLocked.WAIT ? "timeout" : "refused";
            }
            throw e;
        } catch (InterruptedException e) {
            outcome = "interrupted";
            Thread.currentThread().interrupt();
            throw new GcsLockInterruptedException(name, spec.method, e);
        } finally {
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            for (GcsLockedAcquireListener l : listeners) {
                String o = outcome;
                tell(() -> l.acquireFinished(name, spec.ifLocked, o, took));
            }
        }
    }

    /**
     * Publishes {@link GcsLockSkippedEvent}. A listener's exception is logged, as for the other gcslock
     * events, not thrown into the caller: the call was skipped, and a failing alert must not turn that
     * into an error of the scheduled job.
     */
    private void publishSkipped(String name, Method method) {
        try {
            events.publishEvent(new GcsLockSkippedEvent(this, name, method));
        } catch (RuntimeException e) {
            log.warn("lock '{}': a GcsLockSkippedEvent listener threw; ignored: {}", name, e.toString());
            log.debug("GcsLockSkippedEvent listener failure", e);
        }
    }

    private static void tell(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("a GcsLockedAcquireListener threw; ignored: {}", e.toString());
            log.debug("GcsLockedAcquireListener failure", e);
        }
    }

    private Lease acquire(LockRegistry locks, String name, LockedMethod spec) throws InterruptedException {
        if (spec.ifLocked == IfLocked.WAIT) {
            return locks.acquire(name, spec.maxWait != null ? spec.maxWait : NO_LIMIT);
        }
        Duration wait = spec.maxWait != null ? spec.maxWait : defaultWait;
        if (spec.ifLocked == IfLocked.FAIL) {
            if (wait.isZero()) {
                Optional<Lease> lease = locks.tryAcquire(name);
                if (lease.isEmpty()) {
                    throw new LockNotAcquiredException(name, wait, locks.inspect(name).orElse(null), null);
                }
                return lease.get();
            }
            return locks.acquire(name, wait);
        }
        // SKIP
        if (wait.isZero()) {
            return locks.tryAcquire(name).orElse(null);
        }
        try {
            return locks.acquire(name, wait);
        } catch (LockNotAcquiredException e) {
            if (e.getCause() != null) {
                throw e; // GCS errors are not "held elsewhere": reported by invoke(), never skipped silently
            }
            return null;
        }
    }

    private LockedMethod parse(Method method, Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        GcsLocked ann = AnnotatedElementUtils.findMergedAnnotation(specific, GcsLocked.class);
        if (ann == null) {
            ann = AnnotatedElementUtils.findMergedAnnotation(method, GcsLocked.class);
        }
        if (ann == null) {
            throw new IllegalStateException("no @GcsLocked on " + LockNameResolver.describe(method));
        }
        LockNameResolver name = new LockNameResolver(ann.name(), specific, environment);
        return new LockedMethod(name, ann.ifLocked(), duration(ann.maxWait(), "maxWait", specific),
                Optional.ofNullable(duration(ann.holdAtLeast(), "holdAtLeast", specific)).orElse(Duration.ZERO), specific);
    }

    private Duration duration(String raw, String attribute, Method method) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        String value = environment.resolvePlaceholders(raw).trim();
        Duration d;
        try {
            d = DurationStyle.detectAndParse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@GcsLocked on " + LockNameResolver.describe(method) + ": " + attribute
                    + " '" + raw + "' is not a duration (use e.g. 30s, 500ms, PT1M)", e);
        }
        if (d.isNegative()) {
            throw new IllegalStateException("@GcsLocked on " + LockNameResolver.describe(method) + ": " + attribute
                    + " must not be negative, got " + raw);
        }
        return d;
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
