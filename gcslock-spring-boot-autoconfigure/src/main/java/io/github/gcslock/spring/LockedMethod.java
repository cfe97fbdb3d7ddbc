package io.github.gcslock.spring;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;

import java.lang.reflect.Method;
import java.time.Duration;

/**
 * What one {@link GcsLocked} method asks for, read from its annotation once: how to name the lock of a call,
 * what to do when it is held elsewhere, how long to wait and how long to hold it at least. Placeholders in
 * the durations are resolved here; a bad one fails the first call (the start-up name check covers names).
 *
 * @param name        the lock name of each call
 * @param ifLocked    what to do when the lock is held elsewhere
 * @param maxWait     the method's {@code maxWait}, or null when it leaves the wait to its mode
 * @param holdAtLeast how long to keep the lock after acquiring it at least; zero to release at once
 * @param method      the most specific method (on the target class), for messages
 */
record LockedMethod(LockNameResolver name, IfLocked ifLocked, Duration maxWait, Duration holdAtLeast, Method method) {

    /** Reads the {@code @GcsLocked} of {@code method} as invoked on {@code targetClass} (may be null). */
    static LockedMethod of(Method method, Class<?> targetClass, Environment environment) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        GcsLocked ann = AnnotatedElementUtils.findMergedAnnotation(specific, GcsLocked.class);
        if (ann == null) {
            ann = AnnotatedElementUtils.findMergedAnnotation(method, GcsLocked.class);
        }
        if (ann == null) {
            throw new IllegalStateException("no @GcsLocked on " + LockNameResolver.describe(method));
        }
        LockNameResolver name = new LockNameResolver(ann.name(), specific, environment);
        Duration maxWait = duration(ann.maxWait(), "maxWait", specific, environment);
        Duration holdAtLeast = duration(ann.holdAtLeast(), "holdAtLeast", specific, environment);
        return new LockedMethod(name, ann.ifLocked(), maxWait, holdAtLeast != null ? holdAtLeast : Duration.ZERO, specific);
    }

    /** The attribute as a duration ({@code 30s}, {@code PT1M}, a placeholder), or null when it is empty. */
    private static Duration duration(String raw, String attribute, Method method, Environment environment) {
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
}
