package io.github.gcslock.test;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.zip.CRC32C;

/**
 * The object hashes GCS keeps: {@code md5Hash} and {@code crc32c}, both base64 of the big-endian digest,
 * as in object metadata and in the {@code x-goog-hash} header ({@code crc32c=...,md5=...}). Hashes a
 * client sends (in the metadata of an upload, or in {@code x-goog-hash} on the final chunk of a resumable
 * upload) are checked against the content, as GCS does: a mismatch is a 400 and nothing is written.
 */
final class Hashes {

    private Hashes() {
    }

    static String crc32c(byte[] content) {
        CRC32C c = new CRC32C();
        c.update(content);
        long v = c.getValue();
        byte[] b = {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
        return Base64.getEncoder().encodeToString(b);
    }

    static String md5(byte[] content) {
        try {
            return Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The {@code x-goog-hash} value GCS sends with media downloads. */
    static String header(String crc32c, String md5) {
        return md5 == null ? "crc32c=" + crc32c : "crc32c=" + crc32c + ",md5=" + md5; // composed objects have no MD5
    }

    /** Checks {@code crc32c} and {@code md5Hash} of upload metadata, when the client gave them. */
    static void checkMetadata(JsonObject fields, byte[] content) {
        if (fields == null) {
            return;
        }
        check("crc32c", text(fields.get("crc32c")), content);
        check("md5", text(fields.get("md5Hash")), content);
    }

    /** Checks an {@code x-goog-hash} request header ({@code crc32c=...,md5=...}, either part optional). */
    static void checkHashHeader(String header, byte[] content) {
        if (header == null || header.isBlank()) {
            return;
        }
        for (String part : header.split(",")) {
            String p = part.trim();
            int eq = p.indexOf('=');
            if (eq < 0) {
                throw new GcsError(400, "invalid", "Malformed x-goog-hash: " + header);
            }
            String algorithm = p.substring(0, eq).trim();
            if (!algorithm.equals("crc32c") && !algorithm.equals("md5")) {
                throw new GcsError(400, "invalid", "Unknown hash algorithm in x-goog-hash: " + algorithm);
            }
            check(algorithm, p.substring(eq + 1).trim(), content);
        }
    }

    private static void check(String algorithm, String expected, byte[] content) {
        if (expected == null) {
            return;
        }
        String actual = algorithm.equals("crc32c") ? crc32c(content) : md5(content);
        if (!actual.equals(expected)) {
            String name = algorithm.equals("crc32c") ? "CRC32C" : "MD5";
            throw new GcsError(400, "invalid", "Provided " + name + " \"" + expected
                    + "\" doesn't match calculated " + name + " \"" + actual + "\".");
        }
    }

    private static String text(JsonElement e) {
        return e == null || e.isJsonNull() ? null : e.getAsString();
    }
}
