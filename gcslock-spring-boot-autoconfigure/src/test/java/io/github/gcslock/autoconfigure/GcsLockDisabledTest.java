package io.github.gcslock.autoconfigure;

import io.github.gcslock.spring.GcsLocked;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** With gcslock.enabled=false, @GcsLocked methods run without a lock: that is said once at start-up, not silent. */
@ExtendWith(OutputCaptureExtension.class)
class GcsLockDisabledTest {

    public static class NightlyJob {
        @GcsLocked("nightly")
        public void run() {
        }

        @GcsLocked("weekly")
        public void weekly() {
        }
    }

    public static class Plain {
        public void run() {
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(GcsLockEmulatorAutoConfiguration.class,
                GcsLockAutoConfiguration.class, GcsLockDisabledAutoConfiguration.class));
    }

    @Test
    void disabledWithGcsLockedMethodsWarnsOncePerBeanNamingTheMethods(CapturedOutput output) {
        runner().withPropertyValues("gcslock.enabled=false").withBean(NightlyJob.class).withBean(Plain.class).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(output).containsOnlyOnce("gcslock.enabled=false")
                    .contains("NightlyJob.run(..)").contains("NightlyJob.weekly(..)").contains("WITHOUT a lock")
                    .doesNotContain("Plain.run(..)");
        });
    }

    @Test
    void enabledSaysNothing(CapturedOutput output) {
        runner().withPropertyValues("gcslock.emulator.embedded=true").withBean(NightlyJob.class).run(ctx ->
                assertThat(output).doesNotContain("WITHOUT a lock"));
    }
}
