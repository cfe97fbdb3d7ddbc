package io.github.gcslock.test;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpExchange;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** A reply ready to send: status, content type (null for none), body and extra headers. */
record Reply(int status, String contentType, byte[] body, Map<String, String> headers) {

    Reply(int status, String contentType, byte[] body) {
        this(status, contentType, body, Map.of());
    }

    static Reply json(int status, JsonObject json) {
        return new Reply(status, "application/json; charset=UTF-8", json.toString().getBytes(StandardCharsets.UTF_8));
    }

    static Reply empty(int status) {
        return new Reply(status, null, new byte[0]);
    }

    /** A reply without a body, with {@code headers}. */
    static Reply empty(int status, Map<String, String> headers) {
        return new Reply(status, null, new byte[0], headers);
    }

    /** GCS's error reply: {@code {"error":{"code","message","errors":[{"message","domain","reason",...}]}}}; 304 has no body. */
    static Reply error(GcsError e) {
        if (e.status == 304) {
            return empty(304);
        }
        JsonObject detail = new JsonObject();
        detail.addProperty("message", e.getMessage());
        detail.addProperty("domain", "global");
        detail.addProperty("reason", e.reason);
        if (e.location != null) {
            detail.addProperty("locationType", "header");
            detail.addProperty("location", e.location);
        }
        JsonArray errors = new JsonArray();
        errors.add(detail);
        JsonObject err = new JsonObject();
        err.addProperty("code", e.status);
        err.addProperty("message", e.getMessage());
        err.add("errors", errors);
        JsonObject root = new JsonObject();
        root.add("error", err);
        return json(e.status, root);
    }

    void send(HttpExchange ex) throws IOException {
        if (contentType != null) {
            ex.getResponseHeaders().set("Content-Type", contentType);
        }
        headers.forEach((k, v) -> ex.getResponseHeaders().set(k, v));
        if (body.length == 0) {
            ex.sendResponseHeaders(status, -1);
            return;
        }
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }
}
