package io.github.gcslock.spring;

import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.LockNames;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

/**
 * Checks {@link GcsLocked} methods when their bean is created, so that a mistake stops the deployment instead of
 * failing every run later — or, worse, letting a method run unlocked:
 * <ul>
 * <li>lock names: {@code ${...}} placeholders are resolved, literal names are checked against the lock-name
 * rules (with the prefix), SpEL names are parsed and their variables matched to the method's parameters;</li>
 * <li>nothing silently unlocked: a method the proxy cannot intercept ({@code static}, {@code private},
 * {@code final}, or in a {@code final} class under a class-based proxy) and an annotation meta-annotated with
 * {@code @GcsLocked} on a class ({@code @GcsLocked} applies to methods only) are refused, naming the method or
 * class and the reason;</li>
 * <li>the durations {@code maxWait} and {@code holdAtLeast} (after their placeholders): a value that is not a
 * duration or is negative is refused;</li>
 * <li>return types whose work the lock cannot follow to its end — a plain {@link Future} (no completion
 * callback; allowed on {@code @Async} methods, whose body runs under the lock on the executor), a reactive
 * publisher other than Reactor's {@code Mono}/{@code Flux}, Kotlin coroutines — are refused: the lock would be
 * released when the method returns while its work goes on.</li>
 * </ul>
 * Every refusal is a {@link GcsLockConfigurationException} of setting {@code method} (or {@code name}, or
 * {@code duration}), which
 * the failure analyzer reports.
 */
public class GcsLockedNameChecker implements BeanPostProcessor, AopInfrastructureBean {

    private static final String PUBLISHER = "org.reactivestreams.Publisher";

    private final Environment environment;
    private final Set<Class<?>> checked = ConcurrentHashMap.newKeySet();

    public GcsLockedNameChecker(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (type == null || bean instanceof AopInfrastructureBean || !checked.add(type)) {
            return bean;
        }
        Class<?> userType = ClassUtils.getUserClass(type);
        checkNotOnClass(userType);
        Map<Method, GcsLocked> methods = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<GcsLocked>) m -> AnnotatedElementUtils.findMergedAnnotation(m, GcsLocked.class));
        if (methods.isEmpty()) {
            return bean;
        }
        String prefix = Binder.get(environment).bind("gcslock.prefix", String.class).orElse("gcslock/");
        boolean classBasedProxy = environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true);
        methods.forEach((method, annotation) -> {
            checkInterceptable(method, userType, classBasedProxy);
            checkReturnType(method);
            check(method, annotation, prefix);
            checkDurations(method, userType);
        });
        return bean;
    }

    /**
     * {@code @GcsLocked} targets methods (and annotation types) only. An annotation meta-annotated with it but
     * allowed on classes would be placed on a class and ignored there: every method would run unlocked.
     */
    private static void checkNotOnClass(Class<?> type) {
        MergedAnnotation<GcsLocked> onClass = MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).get(GcsLocked.class);
        if (!onClass.isPresent()) {
            return;
        }
        String composed = onClass.getRoot().getType().getSimpleName();
        String where = onClass.getSource() instanceof Class<?> c ? c.getSimpleName() : type.getSimpleName();
        throw methodError("@" + composed + " on class " + where + " is meta-annotated with @GcsLocked, which applies to "
                + "methods only: on a class it would lock nothing and every method of " + type.getSimpleName()
                + " would run unlocked; put @" + composed + " on the methods to lock (and give it @Target(METHOD))");
    }

    /** Refuses a method the proxy would not intercept: it would run unlocked, silently. */
    private static void checkInterceptable(Method method, Class<?> type, boolean classBasedProxy) {
        String at = "@GcsLocked on " + LockNameResolver.describe(method) + ": ";
        int modifiers = method.getModifiers();
        if (Modifier.isStatic(modifiers)) {
            throw methodError(at + "the method is static; Spring's proxies intercept instance methods only, so it "
                    + "would run unlocked. Make it an instance method of a bean");
        }
        if (Modifier.isPrivate(modifiers)) {
            throw methodError(at + "the method is private; a proxy cannot intercept it, so it would run unlocked. "
                    + "Make it public and call it through the bean (not through 'this')");
        }
        // An interface-based proxy (spring.aop.proxy-target-class=false) does intercept an interface's method,
        // whatever the implementation's modifiers.
        boolean viaInterface = !classBasedProxy && declaredByAnInterface(method, type);
        if (Modifier.isFinal(modifiers) && !viaInterface) {
            throw methodError(at + "the method is final; the class-based proxy cannot override it, so it would run "
                    + "unlocked. Remove 'final'");
        }
        if (Modifier.isFinal(type.getModifiers()) && !viaInterface) {
            throw methodError(at + "it is in a final class (" + type.getSimpleName() + "); the class-based proxy "
                    + "cannot subclass it, so it would run unlocked. Remove 'final' from the class");
        }
    }

    private static boolean declaredByAnInterface(Method method, Class<?> type) {
        for (Class<?> i : ClassUtils.getAllInterfacesForClassAsSet(type)) {
            if (ClassUtils.hasMethod(i, method.getName(), method.getParameterTypes())) {
                return true;
            }
        }
        return false;
    }

    /** Refuses a return type whose work goes on after the method returns without a way to tell when it ends. */
    private static void checkReturnType(Method method) {
        Class<?> type = method.getReturnType();
        String at = "@GcsLocked on " + LockNameResolver.describe(method) + ": ";
        Class<?>[] parameters = method.getParameterTypes();
        if (parameters.length > 0 && parameters[parameters.length - 1].getName().equals("kotlin.coroutines.Continuation")) {
            throw methodError(at + "Kotlin suspend functions are not supported: the lock would be released at the "
                    + "first suspension. Return a Mono or Flux (kotlinx-coroutines-reactor) or lock with LockRegistry");
        }
        if (Future.class.isAssignableFrom(type) && !CompletionStage.class.isAssignableFrom(type)
                && !AnnotatedElementUtils.hasAnnotation(method, Async.class)
                && !AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), Async.class)) {
            throw methodError(at + "it returns " + type.getSimpleName() + ", which tells nobody when its work ends: the "
                    + "lock would be released when the method returns while the work goes on. Return "
                    + "CompletableFuture or CompletionStage (the lock is then held until it completes)");
        }
        boolean reactor = type.getName().equals("reactor.core.publisher.Mono") || type.getName().equals("reactor.core.publisher.Flux");
        if (!reactor && (isA(type, PUBLISHER) || isA(type, "kotlinx.coroutines.flow.Flow"))) {
            throw methodError(at + "it returns " + type.getName() + ", a publisher whose work the lock cannot follow: "
                    + "only Reactor's Mono and Flux are held until they terminate. Return a Mono or Flux");
        }
    }

    /** Whether {@code type} is (a subtype of) the class named {@code name}, which may be absent from the class path. */
    private static boolean isA(Class<?> type, String name) {
        for (Class<?> c : ClassUtils.getAllInterfacesForClassAsSet(type)) {
            if (c.getName().equals(name)) {
                return true;
            }
        }
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    private static GcsLockConfigurationException methodError(String message) {
        return new GcsLockConfigurationException("method", message);
    }

    private void check(Method method, GcsLocked annotation, String prefix) {
        LockNameResolver name;
        try {
            name = new LockNameResolver(annotation.name(), method, environment);
        } catch (IllegalStateException e) {
            throw nameError(e.getMessage(), e);
        }
        String problem = name.startUpProblem(prefix);
        if (problem != null) {
            throw nameError(problem, null);
        }
    }

    /**
     * Reads {@code maxWait} and {@code holdAtLeast} as the first call would ({@link LockedMethod#of}), so that a
     * negative or unreadable duration stops start-up instead of failing each call.
     */
    private void checkDurations(Method method, Class<?> type) {
        try {
            LockedMethod.of(method, type, environment);
        } catch (IllegalStateException e) {
            GcsLockConfigurationException refused = new GcsLockConfigurationException("duration", e.getMessage());
            refused.initCause(e.getCause());
            throw refused;
        }
    }

    private static GcsLockConfigurationException nameError(String message, Throwable cause) {
        GcsLockConfigurationException e = new GcsLockConfigurationException("name", message);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /** Checks one literal lock name, as a start-up check reports it. */
    static String literalProblem(String prefix, String name, Method method) {
        try {
            LockNames.check(prefix, name);
            return null;
        } catch (GcsLockConfigurationException e) {
            return "@GcsLocked on " + LockNameResolver.describe(method) + ": " + e.getMessage();
        }
    }
}
