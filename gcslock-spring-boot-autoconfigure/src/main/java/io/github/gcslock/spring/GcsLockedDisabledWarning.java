package io.github.gcslock.spring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Registered when {@code gcslock.enabled=false}: nothing applies {@link GcsLocked} then, so its methods
 * run on every instance at once. Says so with one WARN line per bean class that has such methods, so a
 * switch meant for local development does not silently reach production.
 */
public class GcsLockedDisabledWarning implements BeanPostProcessor, AopInfrastructureBean {

    private static final Logger log = LoggerFactory.getLogger(GcsLockedDisabledWarning.class);

    private final Set<Class<?>> seen = ConcurrentHashMap.newKeySet();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (bean instanceof AopInfrastructureBean || !seen.add(type)) {
            return bean;
        }
        Map<Method, GcsLocked> methods = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<GcsLocked>) m -> AnnotatedElementUtils.findMergedAnnotation(m, GcsLocked.class));
        if (!methods.isEmpty()) {
            log.warn("gcslock.enabled=false: {} run WITHOUT a lock (on every instance at once)",
                    methods.keySet().stream().map(LockNameResolver::describe).sorted()
                            .collect(Collectors.joining(", ", "@GcsLocked ", "")));
        }
        return bean;
    }
}
