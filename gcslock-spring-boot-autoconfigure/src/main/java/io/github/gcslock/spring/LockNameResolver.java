package io.github.gcslock.spring;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.env.Environment;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import java.lang.reflect.Method;

/**
 * Turns a {@link GcsLocked} name into the lock name of one call: {@code ${...}} placeholders are
 * resolved once; a name containing {@code #} is SpEL over the method's arguments ({@code #tenant},
 * {@code #p0}), as a template when it contains {@code #{...}}, else as an expression.
 */
final class LockNameResolver {

    private static final ExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

    private final String literal;
    private final Expression expression;
    private final Method method;
    private final String source;

    LockNameResolver(String raw, Method method, Environment environment) {
        this.method = method;
        this.source = raw;
        if (raw == null || raw.isBlank()) {
            throw new IllegalStateException("@GcsLocked on " + describe(method) + " has no lock name: set value or name");
        }
        String resolved;
        try {
            resolved = environment.resolveRequiredPlaceholders(raw);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@GcsLocked on " + describe(method) + ": cannot resolve the lock name '"
                    + raw + "': " + e.getMessage(), e);
        }
        if (resolved.indexOf('#') < 0) {
            this.literal = resolved;
            this.expression = null;
            return;
        }
        this.literal = null;
        try {
            this.expression = resolved.contains("#{")
                    ? PARSER.parseExpression(resolved, new TemplateParserContext())
                    : PARSER.parseExpression(resolved);
        } catch (RuntimeException e) {
            throw new IllegalStateException("@GcsLocked on " + describe(method) + ": the lock name '" + raw
                    + "' is not a valid SpEL expression: " + e.getMessage(), e);
        }
    }

    String resolve(Object target, Object[] args, BeanFactory beanFactory) {
        if (literal != null) {
            return literal;
        }
        MethodBasedEvaluationContext ctx = new MethodBasedEvaluationContext(target, method, args, NAMES);
        if (beanFactory != null) {
            ctx.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        Object value;
        try {
            value = expression.getValue(ctx);
        } catch (RuntimeException e) {
            throw new IllegalStateException("@GcsLocked on " + describe(method) + ": evaluating the lock name '" + source
                    + "' failed: " + e.getMessage(), e);
        }
        if (value == null || value.toString().isEmpty()) {
            throw new IllegalStateException("@GcsLocked on " + describe(method) + ": the lock name '" + source
                    + "' evaluated to an empty name");
        }
        return value.toString();
    }

    static String describe(Method m) {
        return m.getDeclaringClass().getSimpleName() + "." + m.getName() + "(..)";
    }
}
