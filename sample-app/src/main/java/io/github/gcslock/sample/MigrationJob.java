package io.github.gcslock.sample;

import io.github.gcslock.LockLostException;
import io.github.gcslock.spring.GcsLocked;
import io.github.gcslock.spring.GcsLocks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A long job in steps: it checks its lease between steps and stops cleanly when the lease is lost
 * (another instance may already be running it), instead of finishing blind; and it records its
 * progress in a store fenced by the lease's token, which refuses a write from a holder that was
 * paused past its lease.
 */
@Component
public class MigrationJob implements ApplicationListener<ContextClosedEvent> {

    private static final Logger log = LoggerFactory.getLogger(MigrationJob.class);

    private final Duration step;
    private final int steps;
    private final AtomicInteger completedSteps = new AtomicInteger();
    private final AtomicInteger stoppedOnLoss = new AtomicInteger();
    private volatile boolean shuttingDown;

    private final FencedResultStore results;

    public MigrationJob(FencedResultStore results, @Value("${sample.migration.step:1s}") Duration step,
                        @Value("${sample.migration.steps:30}") int steps) {
        this.results = results;
        this.step = step;
        this.steps = steps;
    }

    @Scheduled(fixedDelayString = "${sample.migration.interval:1s}")
    @GcsLocked("long-migration")
    public void migrate() throws InterruptedException {
        long token = GcsLocks.currentLease().orElseThrow().fencingToken();
        log.info("migration started (fencing token {})", token);
        for (int i = 1; i <= steps; i++) {
            if (shuttingDown) {
                // Stop between steps so shutdown is quick and the lock is released for another instance.
                log.info("migration paused at step {} of {}: the application is shutting down", i, steps);
                return;
            }
            try {
                GcsLocks.checkHealthy();
            } catch (LockLostException e) {
                stoppedOnLoss.incrementAndGet();
                log.warn("migration stopped cleanly before step {} of {}: {}", i, steps, e.getMessage());
                return;
            }
            Thread.sleep(step.toMillis()); // the work of one step
            try {
                // A pause (GC, SIGSTOP) between the check above and this write is what fencing is for:
                // if a newer holder has written meanwhile, the store refuses our older token.
                results.write("migration-progress", "step " + i + " by token " + token, token);
            } catch (FencedResultStore.StaleTokenException e) {
                log.warn("fenced write of step {} refused: {}", i, e.getMessage());
                continue; // the check at the top of the loop now stops the job
            }
            completedSteps.incrementAndGet();
        }
        log.info("migration finished {} steps (fencing token {})", steps, token);
    }

    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        shuttingDown = true;
    }

    public int completedSteps() {
        return completedSteps.get();
    }

    public int stoppedOnLoss() {
        return stoppedOnLoss.get();
    }
}
