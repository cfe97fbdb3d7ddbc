package io.github.gcslock.autoconfigure;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

import java.util.Map;

/**
 * Logging defaults that keep a start-up failure readable. Without Application Default Credentials,
 * spring-cloud-gcp's {@code DefaultCredentialsProvider} logs a WARN with the full stack trace of Google's
 * "default credentials were not found" (about 120 lines) before the {@code Storage} bean fails; gcslock's
 * {@link GcsLockCredentialsFailureAnalyzer} then reports the same fact with what to do. The default lowers
 * that one logger to ERROR; it is added last, so any {@code logging.level.*} the application sets wins.
 */
public class GcsLockLoggingDefaults implements EnvironmentPostProcessor {

    static final String CREDENTIALS_LOGGER = "logging.level.com.google.cloud.spring.core.DefaultCredentialsProvider";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!environment.getPropertySources().contains("gcslockLoggingDefaults")) {
            environment.getPropertySources().addLast(new MapPropertySource("gcslockLoggingDefaults",
                    Map.of(CREDENTIALS_LOGGER, "ERROR")));
        }
    }
}
