package io.github.gcslock.sample;

import java.util.List;

/**
 * The application's own code that README.md's snippets call ({@code closeInvoices}, {@code batches()}, ...):
 * {@link ReadmeSnippetsTest} compiles each member-level snippet in a subclass of this, as the snippet would sit in a
 * user's bean.
 */
public abstract class ReadmeUserCode {

    /** A unit of the nightly report's work. */
    public record Batch(String id) {
    }

    protected List<Batch> batches() {
        return List.of();
    }

    protected void write(Batch batch, long fencingToken) {
    }

    protected void closeInvoices(String tenant, long fencingToken) {
    }

    protected int countOpenInvoices(String tenant) {
        return 0;
    }

    protected void reindex(long fencingToken) {
    }
}
