package io.github.gcslock.spring;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The default names and key values of gcslock's observations. Low-cardinality keys (metrics tags):
 * {@code gcslock.mode}, {@code gcslock.outcome}; high-cardinality (trace attributes only):
 * {@code gcslock.name}, {@code gcslock.fencing-token}. Lock names are never metric tags: per-tenant
 * names would explode the number of time series.
 */
public final class GcsLockObservationConventions {

    /** Name of the observation of each acquisition: its duration is the wait for the lock. */
    public static final String ACQUISITION = "gcslock.acquisition";
    /** Name of the observation of each hold: from acquisition until release or loss. */
    public static final String HOLD = "gcslock.hold";

    private GcsLockObservationConventions() {
    }

    /**
     * What the two conventions share: the observation's name, its contextual (span) name, and the context
     * type it supports.
     */
    abstract static class Named<C extends Observation.Context> implements ObservationConvention<C> {
        private final String name;
        private final String contextualName;
        private final Class<C> contextType;

        Named(String name, String contextualName, Class<C> contextType) {
            this.name = name;
            this.contextualName = contextualName;
            this.contextType = contextType;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public String getContextualName(C context) {
            return contextualName;
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return contextType.isInstance(context);
        }
    }

    /** The default convention of {@link #ACQUISITION} observations. */
    public static class Acquire extends Named<GcsLockAcquireContext> {

        public Acquire() {
            super(ACQUISITION, "gcslock acquire", GcsLockAcquireContext.class);
        }

        @Override
        public KeyValues getLowCardinalityKeyValues(GcsLockAcquireContext context) {
            KeyValues kv = KeyValues.of(KeyValue.of("gcslock.mode", context.getMode()));
            // The outcome is known only at stop; at start (e.g. the ".active" long task timer) it is left out.
            return context.getOutcome() == null ? kv : kv.and("gcslock.outcome", context.getOutcome());
        }

        @Override
        public KeyValues getHighCardinalityKeyValues(GcsLockAcquireContext context) {
            return KeyValues.of("gcslock.name", context.getLockName());
        }
    }

    /** The default convention of {@link #HOLD} observations. */
    public static class Hold extends Named<GcsLockHoldContext> {

        public Hold() {
            super(HOLD, "gcslock hold", GcsLockHoldContext.class);
        }

        @Override
        public KeyValues getLowCardinalityKeyValues(GcsLockHoldContext context) {
            return context.getOutcome() == null ? KeyValues.empty() : KeyValues.of("gcslock.outcome", context.getOutcome());
        }

        @Override
        public KeyValues getHighCardinalityKeyValues(GcsLockHoldContext context) {
            return KeyValues.of(KeyValue.of("gcslock.name", context.getLease().name()),
                    KeyValue.of("gcslock.fencing-token", Long.toString(context.getLease().fencingToken())));
        }
    }
}
