package io.github.gcslock.test;

import com.sun.net.httpserver.HttpExchange;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * A request routed by {@link RequestRouter}: which operation, on which bucket and object, with which
 * query parameters, and the exchange it came on (for its headers and body). A rewrite or copy also names
 * its destination and which of the two it is ({@code action}: {@code rewriteTo} or {@code copyTo}).
 */
record ApiRequest(Operation op, String method, String bucket, String object, Map<String, String> query,
                  HttpExchange exchange, String targetBucket, String targetObject, String action) {

    ApiRequest(Operation op, String method, String bucket, String object, Map<String, String> query, HttpExchange exchange) {
        this(op, method, bucket, object, query, exchange, null, null, null);
    }

    /** The first value of request header {@code name}, or null. */
    String header(String name) {
        return exchange.getRequestHeaders().getFirst(name);
    }

    /** The query parameter {@code key} as a number; null when absent, 400 when not a number. */
    Long longParameter(String key) {
        String v = query.get(key);
        if (v == null) {
            return null;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new GcsError(400, "invalid", "Invalid value for " + key + ": " + v);
        }
    }

    /** The port the request came in on: the shared endpoint's or one client's (see {@link GcsEmulator#endpoint(String)}). */
    int localPort() {
        return exchange.getLocalAddress().getPort();
    }

    /** Reads the request body, inflating it when the client sent it gzipped. */
    byte[] readBody() throws IOException {
        InputStream in = exchange.getRequestBody();
        String encoding = header("Content-Encoding");
        if (encoding != null && encoding.equalsIgnoreCase("gzip")) {
            in = new GZIPInputStream(in);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }
}
