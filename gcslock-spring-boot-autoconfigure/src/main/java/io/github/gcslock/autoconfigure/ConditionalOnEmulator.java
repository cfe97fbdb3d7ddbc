package io.github.gcslock.autoconfigure;

import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Conditional;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Matches when gcslock is pointed at an emulator: {@code gcslock.emulator.endpoint} set or {@code gcslock.emulator.embedded=true}. */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(ConditionalOnEmulator.OnEmulator.class)
@interface ConditionalOnEmulator {

    class OnEmulator extends AnyNestedCondition {

        OnEmulator() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(prefix = "gcslock.emulator", name = "endpoint")
        static class External {
        }

        @ConditionalOnProperty(prefix = "gcslock.emulator", name = "embedded", havingValue = "true")
        static class Embedded {
        }
    }
}
