package io.github.gcslock.test;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The reply to a media download ({@code alt=media}): the content, or the byte range a {@code Range}
 * header asks for (206 with {@code Content-Range}, 416 when unsatisfiable), with GCS's object headers
 * ({@code x-goog-hash}, generations, stored length and encoding, {@code ETag}).
 */
final class MediaDownload {

    private MediaDownload() {
    }

    static Reply reply(StoredObject o, String rangeHeader) {
        byte[] content = o.content();
        String encoding = o.metadata().contentEncoding();
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("x-goog-hash", Hashes.header(o.crc32c(), o.md5()));
        headers.put("x-goog-generation", Long.toString(o.generation()));
        headers.put("x-goog-metageneration", Long.toString(o.metageneration()));
        headers.put("x-goog-stored-content-length", Integer.toString(content.length));
        headers.put("x-goog-stored-content-encoding", encoding != null ? encoding : "identity");
        headers.put("x-goog-storage-class", "STANDARD");
        headers.put("ETag", ObjectResource.etag(o));
        headers.put("Accept-Ranges", "bytes");
        String contentType = o.contentType();
        ByteRange range = ByteRange.parse(rangeHeader, content.length);
        if (range == null) {
            return new Reply(200, contentType, content, headers);
        }
        headers.put("Content-Range", "bytes " + range.first + "-" + range.last + "/" + content.length);
        return new Reply(206, contentType, Arrays.copyOfRange(content, (int) range.first, (int) range.last + 1), headers);
    }

    /** A single {@code Range: bytes=...} of a media download, clamped to the content; null for the whole content. */
    private record ByteRange(long first, long last) {

        static ByteRange parse(String header, int size) {
            if (header == null || header.isBlank()) {
                return null;
            }
            String h = header.trim();
            if (!h.startsWith("bytes=")) {
                throw new GcsError(400, "invalid", "Malformed Range header: " + header);
            }
            String spec = h.substring("bytes=".length()).trim();
            if (spec.contains(",")) {
                throw SupportedParameters.notImplemented("multiple byte ranges (Range: " + header + ")");
            }
            int dash = spec.indexOf('-');
            try {
                if (dash < 0) {
                    throw new NumberFormatException(spec);
                }
                String a = spec.substring(0, dash).trim();
                String b = spec.substring(dash + 1).trim();
                long first;
                long last;
                if (a.isEmpty()) { // suffix: the last N bytes
                    long n = Long.parseLong(b);
                    if (n == 0) {
                        throw unsatisfiable(header, size);
                    }
                    first = Math.max(0, size - n);
                    last = size - 1;
                } else {
                    first = Long.parseLong(a);
                    last = b.isEmpty() ? size - 1 : Math.min(Long.parseLong(b), size - 1);
                    if (!b.isEmpty() && Long.parseLong(b) < first) {
                        throw new GcsError(400, "invalid", "Malformed Range header: " + header);
                    }
                }
                if (size == 0 && first == 0) {
                    return null; // "bytes=0-" of an empty object: the (empty) whole
                }
                if (first >= size) {
                    throw unsatisfiable(header, size);
                }
                return new ByteRange(first, last);
            } catch (NumberFormatException e) {
                throw new GcsError(400, "invalid", "Malformed Range header: " + header);
            }
        }

        private static GcsError unsatisfiable(String header, int size) {
            return new GcsError(416, "requestedRangeNotSatisfiable", "The requested range " + header
                    + " cannot be satisfied for an object of " + size + " bytes.");
        }
    }
}
