package io.github.gcslock;

import com.google.api.client.http.HttpTransport;
import com.google.api.client.http.LowLevelHttpRequest;
import com.google.api.client.http.javanet.NetHttpTransport;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.Storage;
import io.github.gcslock.test.GcsEmulator;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.function.BiConsumer;

/**
 * The client's HTTP transport with a hook that runs on the thread sending each request, just before it is sent (the
 * application's own code inside a call of the engine: a transport of its own, tracing). The registry copies the
 * client's options, this transport included, for every client it makes (rule 15).
 */
final class HookedTransport extends HttpTransport {

    private static final Method BUILD_REQUEST;

    static {
        try {
            BUILD_REQUEST = HttpTransport.class.getDeclaredMethod("buildRequest", String.class, String.class);
            BUILD_REQUEST.setAccessible(true);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final HttpTransport delegate = new NetHttpTransport();
    /** Told (method, url) on the sending thread; set by the test. */
    volatile BiConsumer<String, String> hook = (method, url) -> { };

    /** Whether (method, url), as told to {@link #hook}, is a PATCH (metadata update) of lock {@code name}'s object. */
    static boolean isPatchOf(String name, String method, String url) {
        return !method.equals("GET") && !method.equals("DELETE") && url.contains("/o/gcslock%2F" + name) && !url.contains("/upload/");
    }

    /** A client of {@code gcs} that sends through this transport. */
    Storage client(GcsEmulator gcs) {
        return gcs.options().setTransportOptions(HttpTransportOptions.newBuilder().setHttpTransportFactory(() -> this).build())
                .build().getService();
    }

    @Override
    protected LowLevelHttpRequest buildRequest(String method, String url) throws IOException {
        hook.accept(method, url);
        try {
            return (LowLevelHttpRequest) BUILD_REQUEST.invoke(delegate, method, url);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public boolean supportsMethod(String method) throws IOException {
        return delegate.supportsMethod(method);
    }

    @Override
    public void shutdown() throws IOException {
        delegate.shutdown();
    }
}
