package io.github.gcslock.spring;

import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.LockNames;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Checks the lock names of {@link GcsLocked} methods when their bean is created, so that a bad name
 * stops the deployment instead of failing every run later: {@code ${...}} placeholders are resolved,
 * literal names are checked against the lock-name rules (with the prefix), SpEL names are parsed and
 * their variables matched to the method's parameters.
 */
public class GcsLockedNameChecker implements BeanPostProcessor, AopInfrastructureBean {

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
        Map<Method, GcsLocked> methods = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<GcsLocked>) m -> AnnotatedElementUtils.findMergedAnnotation(m, GcsLocked.class));
        if (methods.isEmpty()) {
            return bean;
        }
        String prefix = Binder.get(environment).bind("gcslock.prefix", String.class).orElse("gcslock/");
        methods.forEach((method, annotation) -> check(method, annotation, prefix));
        return bean;
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
