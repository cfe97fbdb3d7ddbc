package io.github.gcslock.autoconfigure;

import io.github.gcslock.GcsLockRegistry;

/**
 * Customizes the {@link GcsLockRegistry.Builder} of the auto-configured registry, for what no
 * {@code gcslock.*} property covers (a {@code Clock}, the refresher's thread count) or must be computed.
 * Every bean of this type is applied, in {@link org.springframework.core.annotation.Order @Order} /
 * {@link org.springframework.core.Ordered} order, after the properties, the application name and the
 * {@code LockEventListener} beans and before {@link GcsLockRegistry.Builder#build()}; a value set here
 * therefore wins over the property. An invalid value fails start-up like an invalid property, naming the
 * builder setting.
 */
@FunctionalInterface
public interface GcsLockRegistryBuilderCustomizer {

    /**
     * Customizes the builder.
     *
     * @param builder the builder, with the {@code gcslock.*} properties already applied
     */
    void customize(GcsLockRegistry.Builder builder);
}
