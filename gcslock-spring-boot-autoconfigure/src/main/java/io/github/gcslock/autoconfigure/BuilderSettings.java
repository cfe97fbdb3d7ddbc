package io.github.gcslock.autoconfigure;

import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.GcsLockRegistry;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.Name;
import org.springframework.core.annotation.MergedAnnotations;

import java.lang.reflect.Field;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.List;

/**
 * The one list of {@code gcslock.*} properties that configure the engine's {@link GcsLockRegistry.Builder},
 * each under the name of the builder setting it feeds, which is also the name the engine's
 * {@link GcsLockConfigurationException#setting()} reports. {@link GcsLockAutoConfiguration} maps them onto
 * the builder from here with {@link PropertyMapper}; {@link GcsLockFailureAnalyzer} and
 * {@link PropertyMessages} take the settings to rewrite from here and derive each property's name from
 * {@link GcsLockProperties} ({@link #propertyOf}), so a setting added here is both applied and named in
 * start-up reports, and there is no second list to forget.
 */
final class BuilderSettings {

    /** {@code gcslock}: the prefix {@link GcsLockProperties} is bound under. */
    static final String PREFIX = MergedAnnotations.from(GcsLockProperties.class).get(ConfigurationProperties.class)
            .getString("prefix");

    /** How one entry moves its property values onto the builder. */
    @FunctionalInterface
    private interface Mapping {
        void apply(PropertyMapper map, GcsLockProperties properties, GcsLockRegistry.Builder builder);
    }

    /** Builder settings (as the engine names them) and how their properties reach the builder. */
    private record Setting(List<String> names, Mapping mapping) {
    }

    private static Setting setting(String name, Mapping mapping) {
        return new Setting(List.of(name), mapping);
    }

    /**
     * {@code PropertyMapper} skips null values, so a property left unset leaves the engine's default (and its
     * derivation: an unset refresh interval follows the TTL).
     */
    private static final List<Setting> SETTINGS = List.of(
            // An argument of GcsLockRegistry.builder(storage, bucket), resolved by bucketOf(); listed for its name.
            setting("bucket", (map, p, b) -> { }),
            setting("prefix", (map, p, b) -> map.from(p::prefix).to(b::prefix)),
            setting("ttl", (map, p, b) -> map.from(p::ttl).to(b::ttl)),
            setting("refreshInterval", (map, p, b) -> map.from(p::refreshInterval).to(b::refreshInterval)),
            setting("maxRefreshFailures", (map, p, b) -> map.from(p::maxRefreshFailures).to(b::maxRefreshFailures)),
            setting("safetyMargin", (map, p, b) -> map.from(p::safetyMargin).to(b::safetyMargin)),
            setting("operationTimeout", (map, p, b) -> map.from(p::operationTimeout).to(b::operationTimeout)),
            setting("writeRateWindow", (map, p, b) -> map.from(p::writeRateWindow).to(b::writeRateWindow)),
            setting("refreshRateWarningShare", (map, p, b) -> map.from(p::refreshRateWarningShare).to(b::refreshRateWarningShare)),
            setting("verifyBucket", (map, p, b) -> map.from(p::verifyBucket).to(b::verifyBucket)),
            setting("identity", (map, p, b) -> map.from(p::identity).whenHasText().to(b::identity)),
            new Setting(List.of("backoff.initial", "backoff.max", "backoff.multiplier"), (map, p, b) ->
                    map.from(p::backoff).to(backoff -> b.backoff(backoff.initial(), backoff.max(), backoff.multiplier()))));

    private BuilderSettings() {
    }

    /** Sets every property that has a value on {@code builder}. */
    static void applyTo(GcsLockRegistry.Builder builder, GcsLockProperties properties) {
        PropertyMapper map = PropertyMapper.get();
        for (Setting setting : SETTINGS) {
            setting.mapping().apply(map, properties, builder);
        }
    }

    /** The builder settings that have a property, as the engine names them ({@code refreshInterval}, {@code backoff.max}). */
    static List<String> names() {
        return SETTINGS.stream().flatMap(s -> s.names().stream()).toList();
    }

    /** Bucket used by the embedded emulator when {@code gcslock.bucket} is not set. */
    static final String EMBEDDED_BUCKET = "gcslock";

    /** {@code gcslock.bucket}, or the embedded emulator's own bucket when that is used and no bucket is set. */
    static String bucketOf(GcsLockProperties p) {
        if ((p.bucket() == null || p.bucket().isBlank()) && p.emulator().embedded()) {
            return EMBEDDED_BUCKET;
        }
        return p.bucket();
    }

    /**
     * The property bound to {@code setting}, derived from {@link GcsLockProperties} as Boot binds it (each
     * dotted part a record component, in its {@link Name @Name} or dashed form under {@link #PREFIX}):
     * {@code refreshInterval} is {@code gcslock.refresh-interval}, {@code backoff.max} is
     * {@code gcslock.backoff.max}. Null when no property has that name (a builder setting only code can set,
     * such as {@code refresherThreads}, or the lock name).
     */
    static String propertyOf(String setting) {
        StringBuilder property = new StringBuilder(PREFIX);
        Class<?> type = GcsLockProperties.class;
        for (String part : setting.split("\\.", -1)) {
            Field component = componentOf(type, part);
            if (component == null) {
                return null;
            }
            Name name = component.getAnnotation(Name.class); // on the record's field, where Boot reads it too
            property.append('.').append(name != null ? name.value() : DataObjectPropertyName.toDashedForm(part));
            type = component.getType();
        }
        return property.toString();
    }

    /** The field of record component {@code name} of {@code type}, or null. */
    private static Field componentOf(Class<?> type, String name) {
        if (!type.isRecord()) {
            return null;
        }
        for (RecordComponent component : type.getRecordComponents()) {
            if (component.getName().equals(name)) {
                try {
                    return type.getDeclaredField(name);
                } catch (NoSuchFieldException e) {
                    return null; // every record component has its private field
                }
            }
        }
        return null;
    }

    /**
     * A TTL under one second is almost always a unit forgotten: {@code gcslock.ttl=10} binds as 10 ms. No
     * lease could refresh in time (each refresh is one GCS write, and GCS allows about one per second per
     * object), so it gets its own message rather than a refresh-interval error that hides the cause.
     */
    static void checkTtl(Duration ttl) {
        if (ttl != null && !ttl.isNegative() && !ttl.isZero() && ttl.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new GcsLockConfigurationException("ttl", "gcslock.ttl is " + PropertyMessages.format(ttl)
                    + ", under one second (a number without a unit is read as milliseconds: gcslock.ttl=10 means 10ms); "
                    + "a lock must live for several refreshes, so use at least 1s, e.g. gcslock.ttl=5m");
        }
    }

    /**
     * {@code gcslock.wait}, the default wait of {@code @GcsLocked} methods, must not be negative: each later call
     * without its own {@code maxWait} would fail, far from the cause.
     */
    static void checkDefaultWait(Duration wait) {
        if (wait != null && wait.isNegative()) {
            throw new GcsLockConfigurationException("defaultWait", "gcslock.wait is " + PropertyMessages.format(wait)
                    + ", a negative wait; use 0s (the default: one attempt, no waiting) or a positive duration such as 30s");
        }
    }
}
