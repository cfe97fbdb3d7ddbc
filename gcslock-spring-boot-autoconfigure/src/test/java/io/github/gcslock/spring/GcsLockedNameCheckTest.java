package io.github.gcslock.spring;

import io.github.gcslock.autoconfigure.GcsLockFailureAnalyzer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** Lock names of {@code @GcsLocked} methods are checked when the bean is created: a bad one fails start-up, naming the method. */
class GcsLockedNameCheckTest {

    private static final String BUCKET = SharedEmulator.newBucket();

    private ApplicationContextRunner runner() {
        return SharedEmulator.runner(BUCKET).withPropertyValues("app.job=my*job", "app.good=good-job");
    }

    private String startUpReport(Class<?> bean) {
        String[] report = new String[1];
        runner().withBean(bean).run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis a = new GcsLockFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(a).as("analyzed by gcslock").isNotNull();
            report[0] = a.getDescription();
        });
        return report[0];
    }

    static class Star { @GcsLocked("my*job") public void run() { } }

    static class Placeholder { @GcsLocked("${app.job}") public void run() { } }

    static class Missing { @GcsLocked("${app.nosuch}") public void run() { } }

    static class Hash { @GcsLocked("my#job") public void run() { } }

    static class BadSpel { @GcsLocked("'tenant-' + #tenant +") public void run(String tenant) { } }

    static class UnknownVariable { @GcsLocked("'tenant-' + #tenantId") public void run(String tenant) { } }

    static class BadTemplateText { @GcsLocked("job?-#{#tenant}") public void run(String tenant) { } }

    static class Empty { @GcsLocked("") public void run() { } }

    static class Good {
        @GcsLocked("${app.good}") public void a() { }
        @GcsLocked("'tenant-' + #tenant") public void b(String tenant) { }
        @GcsLocked("order-#{#p0}") public void c(long id) { }
    }

    @Test
    void aLiteralNameWithAForbiddenCharacterFailsNamingTheMethodAndTheCharacter() {
        assertThat(startUpReport(Star.class)).isEqualTo("gcslock is misconfigured: @GcsLocked on Star.run(..): lock name "
                + "'my*job' contains '*'; the characters # [ ] * ? are not allowed");
    }

    @Test
    void placeholdersAreResolvedAndCheckedAtStartUp() {
        assertThat(startUpReport(Placeholder.class)).contains("@GcsLocked on Placeholder.run(..)").contains("'my*job' contains '*'");
        assertThat(startUpReport(Missing.class)).contains("@GcsLocked on Missing.run(..)")
                .contains("cannot resolve the lock name '${app.nosuch}'");
    }

    @Test
    void aHashInAPlainNameIsNotReportedAsASpelError() {
        assertThat(startUpReport(Hash.class)).startsWith("gcslock is misconfigured: @GcsLocked on Hash.run(..): "
                + "`#` is not allowed in lock names: 'my#job'").doesNotContain("EL10");
    }

    @Test
    void spelNamesAreParsedAndTheirVariablesMatchedToParameters() {
        assertThat(startUpReport(BadSpel.class)).contains("@GcsLocked on BadSpel.run(..)").contains("is not a valid SpEL expression");
        assertThat(startUpReport(UnknownVariable.class)).isEqualTo("gcslock is misconfigured: @GcsLocked on UnknownVariable.run(..): "
                + "the lock name ''tenant-' + #tenantId' uses #tenantId, which is not a parameter of the method (parameters: #tenant)");
        assertThat(startUpReport(BadTemplateText.class)).contains("@GcsLocked on BadTemplateText.run(..)").contains("contains '?'");
        assertThat(startUpReport(Empty.class)).contains("@GcsLocked on Empty.run(..) has no lock name");
    }

    @Test
    void goodNamesStart() {
        runner().withBean(Good.class).run(ctx -> assertThat(ctx).hasNotFailed());
    }
}
