package io.github.gcslock.autoconfigure;

import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Stops start-up on a key under {@code gcslock.} that no gcslock property has ({@code gcslock.tll=10s},
 * {@code gcslock.refresh-intervall=2s}): Boot would ignore it, and the application would run on the default
 * it meant to change (a 5-minute TTL instead of 10 s), which shows only during an incident.
 * <p>
 * The keys are found the way Boot's {@code @ConfigurationProperties(ignoreUnknownFields = false)} finds them: by
 * binding {@link GcsLockProperties} with a {@link NoUnboundElementsBindHandler}. Like Boot, it leaves out the
 * environment variables and the JVM's system properties (an unrelated {@code GCSLOCK_*} variable or
 * {@code -Dgcslock.*} flag of some tool must not stop the application): it checks the configuration files,
 * the command line, and every other property source. A key that another module declares in its configuration
 * metadata ({@code META-INF/spring-configuration-metadata.json}) is left alone. Runs as a bean factory
 * post-processor, before any bean is created.
 */
final class UnknownPropertyCheck implements BeanFactoryPostProcessor {

    private final Environment environment;

    UnknownPropertyCheck(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        check(environment, beanFactory.getBeanClassLoader());
    }

    /** @throws UnknownGcsLockPropertyException naming the unknown keys, each with the nearest valid one */
    static void check(Environment environment, ClassLoader classLoader) {
        Iterable<ConfigurationPropertySource> sources = ConfigurationPropertySources.get(environment);
        Binder binder = new Binder(sources, new PropertySourcesPlaceholdersResolver(environment));
        BindHandler handler = new NoUnboundElementsBindHandler(BindHandler.DEFAULT, UnknownPropertyCheck::checked);
        try {
            binder.bind(BuilderSettings.PREFIX, Bindable.of(GcsLockProperties.class), handler);
        } catch (BindException e) {
            if (!(e.getCause() instanceof UnboundConfigurationPropertiesException unbound)) {
                return; // a bad value: the binding of the properties bean reports it, with Boot's own analysis
            }
            Set<String> ownedElsewhere = declaredNames(classLoader);
            List<ConfigurationProperty> unknown = unbound.getUnboundProperties().stream()
                    .filter(p -> !declared(p.getName().toString(), ownedElsewhere)).toList();
            if (!unknown.isEmpty()) {
                throw new UnknownGcsLockPropertyException(unknown, knownNames(ownedElsewhere));
            }
        }
    }

    /** Whether the unbound keys of {@code source} count: not those of the environment variables and system properties. */
    private static boolean checked(ConfigurationPropertySource source) {
        Object underlying = source.getUnderlyingSource();
        String name = underlying instanceof org.springframework.core.env.PropertySource<?> ps ? ps.getName() : "";
        return !name.equals(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME)
                && !name.equals(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
    }

    /** Whether another module declares {@code key} (or a map or list property that holds it) in its metadata. */
    private static boolean declared(String key, Set<String> names) {
        return names.stream().filter(name -> !OWN.contains(name))
                .anyMatch(name -> key.equals(name) || key.startsWith(name + ".") || key.startsWith(name + "["));
    }

    /** The keys of {@link GcsLockProperties}, as Boot binds them. */
    private static final Set<String> OWN = new TreeSet<>();

    static {
        collect(GcsLockProperties.class, BuilderSettings.PREFIX, OWN);
    }

    /** The property names of a {@code gcslock} record, as Boot binds them (dashed, or their {@code @Name}). */
    private static void collect(Class<?> type, String prefix, Set<String> into) {
        for (var component : type.getRecordComponents()) {
            String part;
            try {
                var name = type.getDeclaredField(component.getName())
                        .getAnnotation(org.springframework.boot.context.properties.bind.Name.class);
                part = name != null ? name.value()
                        : org.springframework.boot.context.properties.bind.DataObjectPropertyName.toDashedForm(component.getName());
            } catch (NoSuchFieldException e) {
                continue;
            }
            if (component.getType().isRecord()) {
                collect(component.getType(), prefix + "." + part, into);
            } else {
                into.add(prefix + "." + part);
            }
        }
    }

    /** The valid keys: gcslock's own and those other modules declare under {@code gcslock.}. */
    private static List<String> knownNames(Set<String> declared) {
        Set<String> all = new TreeSet<>(OWN);
        all.addAll(declared);
        return List.copyOf(all);
    }

    /** Every property name under {@code gcslock.} in the configuration metadata on the class path. */
    static Set<String> declaredNames(ClassLoader classLoader) {
        Set<String> names = new TreeSet<>();
        try {
            Resource[] files = new PathMatchingResourcePatternResolver(classLoader)
                    .getResources("classpath*:META-INF/spring-configuration-metadata.json");
            for (Resource file : files) {
                Map<String, Object> metadata = JsonParserFactory.getJsonParser()
                        .parseMap(file.getContentAsString(StandardCharsets.UTF_8));
                Object properties = metadata.get("properties");
                if (properties instanceof List<?> list) {
                    for (Object p : list) {
                        Object name = p instanceof Map<?, ?> m ? m.get("name") : null;
                        if (name instanceof String s && s.startsWith(BuilderSettings.PREFIX + ".")) {
                            names.add(s);
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable metadata: only gcslock's own keys are known
        }
        return names;
    }

    /** The valid key nearest to {@code key} (edit distance, ignoring dashes), or null when none is close. */
    static String nearest(String key, List<String> known) {
        String plain = key.replace("-", "");
        return known.stream()
                .map(k -> Map.entry(k, distance(plain, k.replace("-", ""))))
                .filter(e -> e.getValue() <= Math.max(2, (plain.length() - BuilderSettings.PREFIX.length()) / 3))
                .min(Comparator.comparingInt((Map.Entry<String, Integer> e) -> e.getValue()))
                .map(Map.Entry::getKey).orElse(null);
    }

    /** Levenshtein distance, with the swap of two neighbouring characters counted as one edit. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }

    /** Unknown keys under {@code gcslock.}, each with where it was set and the nearest valid key. */
    static final class UnknownGcsLockPropertyException extends RuntimeException {

        private final List<String> lines = new ArrayList<>();
        private final List<String> renames = new ArrayList<>();

        UnknownGcsLockPropertyException(List<ConfigurationProperty> unknown, List<String> known) {
            super("unknown gcslock properties: " + unknown.stream().map(p -> p.getName().toString()).toList());
            for (ConfigurationProperty p : unknown) {
                String key = p.getName().toString();
                String near = nearest(key, known);
                lines.add(key + (p.getOrigin() != null ? " (" + p.getOrigin() + ")" : "") + " is not a gcslock property"
                        + (near != null ? "; did you mean " + near + "?" : ""));
                renames.add(near != null ? "rename " + key + " to " + near : "remove " + key);
            }
        }

        /** One line per unknown key: {@code gcslock.tll (from ...) is not a gcslock property; did you mean gcslock.ttl?} */
        List<String> lines() {
            return lines;
        }

        /** What to do with each key: rename it to its nearest valid key, or remove it. */
        List<String> renames() {
            return renames;
        }
    }
}
