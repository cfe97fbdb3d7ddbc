package io.github.gcslock.spring;

import io.github.gcslock.LockNames;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.env.Environment;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.LiteralExpression;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

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
        if (resolved.isBlank()) {
            // e.g. "${app.job-name}" with app.job-name= : the engine would only say "lock name must not be empty".
            throw new IllegalStateException("@GcsLocked on " + describe(method) + ": the lock name '" + raw
                    + "' resolved to an empty name");
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
            if (!resolved.contains("#{") && LOOKS_LITERAL.matcher(resolved).matches()) {
                // "my#job" was meant as a plain name: say what is wrong with it, not how SpEL failed to parse it.
                throw new IllegalStateException("@GcsLocked on " + describe(method) + ": `#` is not allowed in lock names: '"
                        + raw + "' (a name with # is read as SpEL over the method's arguments, e.g. \"'invoice-' + #tenant\" "
                        + "or \"invoice-#{#tenant}\"; for a fixed name leave the # out)", e);
            }
            throw new IllegalStateException("@GcsLocked on " + describe(method) + ": the lock name '" + raw
                    + "' is not a valid SpEL expression: " + e.getMessage(), e);
        }
    }

    /** No quotes, operators, brackets or spaces: a fixed name, not an expression that failed to parse. */
    private static final Pattern LOOKS_LITERAL = Pattern.compile("[^'\"+()\\[\\]{}\\s]*");

    /**
     * What is wrong with this name that can be known before any call, or null: a literal name breaking the
     * lock-name rules, a literal part of a template breaking them, or a SpEL variable that is not a
     * parameter of the method (it would evaluate to null on every call).
     */
    String startUpProblem(String prefix) {
        if (literal != null) {
            return GcsLockedNameChecker.literalProblem(prefix, literal, method);
        }
        List<Expression> parts = new ArrayList<>();
        if (expression instanceof CompositeStringExpression composite) {
            parts.addAll(Arrays.asList(composite.getExpressions()));
        } else {
            parts.add(expression);
        }
        String[] params = NAMES.getParameterNames(method);
        for (Expression part : parts) {
            if (part instanceof LiteralExpression text && !text.getExpressionString().isEmpty()) {
                int bad = LockNames.forbiddenCharAt(text.getExpressionString());
                if (bad >= 0) {
                    return "@GcsLocked on " + describe(method) + ": the lock name '" + source + "' contains '"
                            + printable(text.getExpressionString().charAt(bad)) + "'; control characters and # [ ] * ? are not allowed in lock names";
                }
            }
            if (part instanceof SpelExpression spel && params != null) {
                String unknown = unknownVariable(spel.getAST(), params);
                if (unknown != null) {
                    return "@GcsLocked on " + describe(method) + ": the lock name '" + source + "' uses #" + unknown
                            + ", which is not a parameter of the method (parameters: "
                            + (params.length == 0 ? "none" : "#" + String.join(", #", params)) + ")";
                }
            }
        }
        return null;
    }

    private String unknownVariable(SpelNode node, String[] params) {
        if (node instanceof VariableReference) {
            String name = node.toStringAST().substring(1);
            boolean known = name.equals("root") || name.equals("this") || Arrays.asList(params).contains(name)
                    || name.matches("[ap]\\d+") && Integer.parseInt(name.substring(1)) < params.length;
            if (!known) {
                return name;
            }
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            String unknown = unknownVariable(node.getChild(i), params);
            if (unknown != null) {
                return unknown;
            }
        }
        return null;
    }

    private static String printable(char c) {
        return Character.isISOControl(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c);
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
