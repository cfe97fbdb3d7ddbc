package io.github.gcslock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Logs one WARN when this registry's own refresh writes approach its share of a bucket's write budget
 * (README "Scale"): GCS starts a bucket at about {@value #BUCKET_WRITES_PER_SECOND} object writes per second
 * and ramps up over time; above that, writes get 429 and refreshes fail. Warns again only after the rate
 * has fallen below 80 % of the threshold, so a registry hovering at the threshold logs once.
 */
final class RefreshRateWarning {

    /** GCS's documented initial object-write capacity of a bucket, per second. */
    static final double BUCKET_WRITES_PER_SECOND = 1000;

    private static final Logger log = LoggerFactory.getLogger(RefreshRateWarning.class);

    private final double share;
    private final double threshold;
    private final String bucket;
    private final AtomicBoolean above = new AtomicBoolean();

    RefreshRateWarning(double share, String bucket) {
        this.share = share;
        this.threshold = share * BUCKET_WRITES_PER_SECOND;
        this.bucket = bucket;
    }

    /** Writes per second at which this registry warns. */
    double threshold() {
        return threshold;
    }

    void check(double writesPerSecond, int leases) {
        if (writesPerSecond >= threshold) {
            if (above.compareAndSet(false, true)) {
                log.warn("the {} lock(s) this registry holds refresh at {} writes/s, {} % of the ~{} object writes/s "
                                + "GCS starts bucket '{}' at (warning at {} %, gcslock.refresh-rate-warning-share); all "
                                + "instances together above that budget get 429s and failing refreshes: lengthen the refresh "
                                + "interval (gcslock.ttl / gcslock.refresh-interval) or spread the locks over several buckets "
                                + "(README, \"Scale\")", leases, Math.round(writesPerSecond),
                        Math.round(100 * writesPerSecond / BUCKET_WRITES_PER_SECOND), Math.round(BUCKET_WRITES_PER_SECOND),
                        bucket, Math.round(100 * share));
            }
        } else if (writesPerSecond < 0.8 * threshold) {
            above.set(false);
        }
    }
}
