package io.github.gcslock.autoconfigure;

import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * Stops an application on Spring Boot 3 before its context is refreshed, with one paragraph saying that
 * this version of gcslock needs Spring Boot 4. Without it, a Boot 3.5 application that adds the starter
 * builds, then dies with an unrelated bean-override error from the Boot 4 modules the starter brings.
 * Written against API that Boot 3 and 4 share (an initializer from {@code spring.factories}).
 */
public class SpringBootVersionCheck implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    /** In Spring Boot's core jar since 4.0 (moved there from {@code org.springframework.boot.env}). */
    static final String BOOT_4_MARKER = "org.springframework.boot.EnvironmentPostProcessor";

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        check(context.getClassLoader());
    }

    static void check(ClassLoader classLoader) {
        if (!ClassUtils.isPresent(BOOT_4_MARKER, classLoader)) {
            throw new UnsupportedSpringBootException(SpringBootVersion.getVersion());
        }
    }

    /** The application runs a Spring Boot older than 4.0. */
    public static class UnsupportedSpringBootException extends IllegalStateException {

        private final String bootVersion;

        public UnsupportedSpringBootException(String bootVersion) {
            super("gcslock needs Spring Boot 4.0 or 4.1, but this application runs Spring Boot "
                    + (bootVersion != null ? bootVersion : "3.x or older"));
            this.bootVersion = bootVersion;
        }

        /** The Spring Boot version found, or null if unknown. */
        public String bootVersion() {
            return bootVersion;
        }
    }
}
