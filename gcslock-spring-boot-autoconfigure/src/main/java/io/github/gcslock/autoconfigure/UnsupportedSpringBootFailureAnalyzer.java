package io.github.gcslock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** The one-paragraph report for an application on Spring Boot 3 (uses only API that Boot 3 has too). */
public class UnsupportedSpringBootFailureAnalyzer
        extends AbstractFailureAnalyzer<SpringBootVersionCheck.UnsupportedSpringBootException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SpringBootVersionCheck.UnsupportedSpringBootException cause) {
        String found = cause.bootVersion() != null ? "Spring Boot " + cause.bootVersion() : "a Spring Boot older than 4.0";
        return new FailureAnalysis("This version of gcslock (" + GcsLockFailureAnalyzer.gcslockVersion() + ") needs Spring Boot 4 "
                + "(4.0.x or 4.1.x, on Java 17 to 25), and this application runs " + found + ". gcslock's starter is built "
                + "on Spring Boot 4's modules (spring-boot-health, the Boot 4 Actuator and auto-configuration packages), "
                + "which do not work beside Spring Boot 3.",
                "Upgrade the application to Spring Boot 4.0.x or 4.1.x, or remove gcslock-spring-boot-starter.", cause);
    }
}
