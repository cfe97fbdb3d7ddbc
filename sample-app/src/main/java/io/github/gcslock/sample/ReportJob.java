package io.github.gcslock.sample;

import io.github.gcslock.Lease;
import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.GcsLocks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The classic use: a scheduled job that every instance schedules but exactly one runs each time.
 * {@code holdAtLeast} keeps the lock a little after the job ends, so an instance whose schedule fires
 * slightly later does not run the same report again.
 */
@Component
public class ReportJob {

    private static final Logger log = LoggerFactory.getLogger(ReportJob.class);

    private final AtomicInteger runs = new AtomicInteger();
    private final String instance;

    public ReportJob(@Value("${spring.application.name}:${server.port:8080}") String instance) {
        this.instance = instance;
    }

    @Scheduled(fixedDelayString = "${sample.report.interval:10s}", initialDelayString = "${sample.report.initial-delay:1s}")
    @GcsLocked(value = "nightly-report", holdAtLeast = "${sample.report.hold-at-least:2s}")
    public void nightlyReport() {
        Lease lease = GcsLocks.currentLease().orElseThrow();
        int n = runs.incrementAndGet();
        log.info("{} runs the report (run {} here, fencing token {})", instance, n, lease.fencingToken());
    }

    /** How many times this instance ran the report. */
    public int runs() {
        return runs.get();
    }
}
