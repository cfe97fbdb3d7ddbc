package io.github.gcslock.test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Splits a {@code multipart/related} body (the client's multipart upload) into its parts. */
final class Multipart {

    private Multipart() {
    }

    static List<byte[]> parts(String contentType, byte[] body) {
        String boundary = boundary(contentType);
        // ISO-8859-1 maps each byte to one char, so indexes in the string are indexes in the bytes.
        String s = new String(body, StandardCharsets.ISO_8859_1);
        String delimiter = "--" + boundary;
        List<byte[]> parts = new ArrayList<>();
        int pos = s.indexOf(delimiter);
        if (pos < 0) {
            throw new GcsError(400, "invalid", "multipart body without boundary " + boundary);
        }
        while (true) {
            int start = pos + delimiter.length();
            if (s.startsWith("--", start)) {
                break; // closing delimiter
            }
            start = skipLineBreak(s, start);
            int next = s.indexOf("\r\n" + delimiter, start);
            if (next < 0) {
                next = s.indexOf("\n" + delimiter, start);
                if (next < 0) {
                    throw new GcsError(400, "invalid", "unterminated multipart part");
                }
                parts.add(Arrays.copyOfRange(body, start, next));
                pos = next + 1;
            } else {
                parts.add(Arrays.copyOfRange(body, start, next));
                pos = next + 2;
            }
        }
        return parts;
    }

    /** The body of one part: what follows its headers and the blank line. */
    static byte[] partBody(byte[] part) {
        String s = new String(part, StandardCharsets.ISO_8859_1);
        int sep = s.indexOf("\r\n\r\n");
        int len = 4;
        if (sep < 0) {
            sep = s.indexOf("\n\n");
            len = 2;
        }
        if (sep < 0) {
            return part;
        }
        return Arrays.copyOfRange(part, sep + len, part.length);
    }

    private static int skipLineBreak(String s, int i) {
        if (s.startsWith("\r\n", i)) {
            return i + 2;
        }
        if (s.startsWith("\n", i)) {
            return i + 1;
        }
        return i;
    }

    private static String boundary(String contentType) {
        if (contentType != null) {
            for (String p : contentType.split(";")) {
                String t = p.trim();
                if (t.startsWith("boundary=")) {
                    String b = t.substring("boundary=".length());
                    return b.startsWith("\"") && b.endsWith("\"") ? b.substring(1, b.length() - 1) : b;
                }
            }
        }
        throw new GcsError(400, "invalid", "multipart upload without a boundary in Content-Type: " + contentType);
    }
}
