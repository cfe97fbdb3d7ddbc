package io.github.gcslock.benchmarks;

import io.github.gcslock.test.Operation;

import java.time.Duration;
import java.util.Map;

/**
 * GCS operation charges at list price, Standard storage in a single region (https://cloud.google.com/storage/pricing,
 * "Operation charges" and "Operations by class"; BENCHMARKS.md cites it): Class A (objects insert, patch, update,
 * list, compose, rewrite; buckets insert) $0.005 per 1,000; Class B (objects get, buckets get) $0.0004 per 1,000;
 * deletes free. A month is 30 days.
 */
final class Pricing {

    static final double CLASS_A_USD = 0.005 / 1000;
    static final double CLASS_B_USD = 0.0004 / 1000;
    static final double MINUTES_PER_MONTH = 30 * 24 * 60;
    static final double SECONDS_PER_MONTH = MINUTES_PER_MONTH * 60;

    private Pricing() {
    }

    /** The list price of one request of {@code op}. */
    static double usd(Operation op) {
        return switch (op) {
            case INSERT, UPLOAD, PATCH, UPDATE, LIST, COMPOSE, REWRITE, BUCKET_INSERT, BUCKET_LIST -> CLASS_A_USD;
            case GET, BUCKET_GET -> CLASS_B_USD;
            case DELETE, BUCKET_DELETE -> 0;
            case OTHER -> CLASS_A_USD; // unknown: counted at the dearer class
        };
    }

    /** Dollars per month for {@code counts} requests made over {@code units} units, at {@code unitsPerMonth}. */
    static double usd(Map<Operation, Long> counts, long units, double unitsPerMonth) {
        double perUnit = 0;
        for (Map.Entry<Operation, Long> e : counts.entrySet()) {
            perUnit += e.getValue() * usd(e.getKey());
        }
        return perUnit / Math.max(1, units) * unitsPerMonth;
    }

    /** Dollars per month for {@code leases} held all month, each refreshed (one PATCH) every {@code interval}. */
    static double heldLeasesPerMonth(int leases, Duration interval) {
        return leases * (SECONDS_PER_MONTH / (interval.toMillis() / 1000.0)) * CLASS_A_USD;
    }
}
