package io.github.gcslock.test;

import com.google.gson.JsonObject;

import java.io.ByteArrayOutputStream;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Resumable upload sessions of the JSON API ({@code uploadType=resumable}): a session is started with a
 * POST that carries the object's metadata and preconditions, takes the content in one or more PUTs with
 * {@code Content-Range}, answers status queries ({@code bytes *}{@code /*}) with 308 and the persisted
 * {@code Range}, and creates the object when the last byte arrives. Cancelling (DELETE) answers 499.
 *
 * <p>The preconditions are checked when the upload is finalised, not when the session starts: an object
 * created by someone else while the content was being sent must still make an {@code ifGenerationMatch=0}
 * upload fail with 412, or two writers that both "create if absent" would both succeed.
 */
final class ResumableUploads {

    /** GCS persists non-final chunks in multiples of 256 KiB; the client resends what was not acknowledged. */
    static final int CHUNK_QUANTUM = 256 * 1024;

    private final ObjectStore store;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    ResumableUploads(ObjectStore store) {
        this.store = store;
    }

    /** What a PUT to a session produced: either more is expected ({@code object == null}) or the object. */
    record Progress(long persisted, StoredObject object) {
    }

    private static final class Session {
        final String bucket;
        final String name;
        final JsonObject fields;
        final Preconditions preconditions;
        final Long declaredLength;
        /** Replaced by an empty stream when the session ends: reset() would keep the buffer. */
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        StoredObject result;
        boolean cancelled;

        Session(String bucket, String name, JsonObject fields, Preconditions preconditions, Long declaredLength) {
            this.bucket = bucket;
            this.name = name;
            this.fields = fields;
            this.preconditions = preconditions;
            this.declaredLength = declaredLength;
        }
    }

    /** Starts a session and returns its upload id. Checks bucket and name now; preconditions at the end. */
    String start(String bucket, String name, JsonObject fields, Preconditions preconditions, Long declaredLength) {
        store.getBucket(bucket); // 404 for a missing bucket now, as GCS does
        ObjectStore.validateName(name);
        String id = UUID.randomUUID().toString().replace("-", "");
        sessions.put(id, new Session(bucket, name, fields, preconditions, declaredLength));
        return id;
    }

    /**
     * One PUT to the session. {@code contentRange} is the request's {@code Content-Range} header (null
     * when absent: the body is then the whole object), {@code hashHeader} its {@code x-goog-hash}.
     */
    Progress put(String uploadId, String contentRange, byte[] body, String hashHeader) {
        Session s = session(uploadId);
        synchronized (s) {
            if (s.cancelled) {
                throw cancelled(uploadId);
            }
            if (s.result != null) {
                // The object exists already: GCS answers every later PUT (a retried final chunk, a status
                // query) with the object, so a client whose final reply was lost can learn it succeeded.
                return new Progress(s.result.size(), s.result);
            }
            ContentRange range = ContentRange.parse(contentRange, body.length);
            long persisted = s.content.size();
            if (range.first != null) {
                if (range.first > persisted) {
                    throw new GcsError(400, "invalid", "Content-Range " + contentRange + " starts at byte " + range.first
                            + " but only " + persisted + " bytes are persisted in upload " + uploadId);
                }
                long skip = persisted - range.first; // bytes the client resent that were already persisted
                if (skip < body.length) {
                    long total = range.total == null ? -1 : range.total;
                    boolean finalChunk = total >= 0 && range.last + 1 == total;
                    int take = body.length - (int) skip;
                    if (!finalChunk) {
                        long end = persisted + take;
                        take = (int) (end - end % CHUNK_QUANTUM - persisted);
                        take = Math.max(take, 0);
                    }
                    s.content.write(body, (int) skip, take);
                }
            }
            persisted = s.content.size();
            if (range.total == null || persisted < range.total) {
                return new Progress(persisted, null); // 308: the client learns from Range what to send next
            }
            if (persisted > range.total) {
                throw new GcsError(400, "invalid", "upload " + uploadId + " has " + persisted
                        + " bytes persisted, more than the total " + range.total + " in Content-Range " + contentRange);
            }
            byte[] content = s.content.toByteArray();
            if (s.declaredLength != null && s.declaredLength != content.length) {
                throw new GcsError(400, "invalid", "X-Upload-Content-Length was " + s.declaredLength
                        + " but the upload has " + content.length + " bytes");
            }
            Hashes.checkHashHeader(hashHeader, content);
            Hashes.checkMetadata(s.fields, content);
            s.result = store.insert(s.bucket, s.name, ObjectResource.metadataOf(s.fields), content, s.preconditions);
            s.content = new ByteArrayOutputStream(0); // the object holds the bytes now; the session keeps only its reply
            return new Progress(content.length, s.result);
        }
    }

    /** Cancels the session; GCS answers 499 and the session takes no more data. */
    void cancel(String uploadId) {
        Session s = session(uploadId);
        synchronized (s) {
            if (s.result != null) {
                throw new GcsError(400, "invalid", "upload " + uploadId + " is complete and cannot be cancelled");
            }
            s.cancelled = true;
            s.content = new ByteArrayOutputStream(0);
        }
    }

    private Session session(String uploadId) {
        Session s = uploadId == null ? null : sessions.get(uploadId);
        if (s == null) {
            throw new GcsError(404, "notFound", "No such resumable upload session: " + uploadId);
        }
        return s;
    }

    private static GcsError cancelled(String uploadId) {
        return new GcsError(499, "clientClosedRequest", "The resumable upload " + uploadId + " was cancelled.");
    }

    /**
     * The {@code Content-Range} of a PUT to a session, in every form GCS accepts for resumable uploads:
     * <ul>
     *   <li>{@code bytes FIRST-LAST/TOTAL} and {@code bytes FIRST-LAST/*}: a chunk; final when LAST + 1 = TOTAL;</li>
     *   <li>{@code bytes FIRST-*}{@code /TOTAL}: the body runs from FIRST to where it ends, of an object of TOTAL bytes
     *       (final when it reaches TOTAL);</li>
     *   <li>{@code bytes FIRST-*}{@code /*}: the body is the rest of an object of unknown length, so this request is
     *       the last (what the Node.js client's streaming upload sends, as {@code bytes 0-*}{@code /*});</li>
     *   <li>{@code bytes *}{@code /TOTAL} and {@code bytes *}{@code /*} with an empty body: a status query, or with
     *       TOTAL the finalisation of an upload whose bytes are all persisted.</li>
     * </ul>
     * {@code last} is {@code first - 1} for an open-ended range with an empty body.
     */
    record ContentRange(Long first, Long last, Long total) {

        static ContentRange parse(String header, int bodyLength) {
            if (header == null) {
                // No Content-Range: the body is the whole object in one request.
                return bodyLength == 0 ? new ContentRange(null, null, 0L)
                        : new ContentRange(0L, (long) bodyLength - 1, (long) bodyLength);
            }
            String h = header.trim();
            if (!h.startsWith("bytes ")) {
                throw bad(header);
            }
            String spec = h.substring("bytes ".length()).trim();
            int slash = spec.indexOf('/');
            if (slash < 0) {
                throw bad(header);
            }
            String range = spec.substring(0, slash).trim();
            String totalText = spec.substring(slash + 1).trim();
            try {
                Long total = totalText.equals("*") ? null : Long.parseLong(totalText);
                if (total != null && total < 0) {
                    throw bad(header);
                }
                if (range.equals("*")) {
                    if (bodyLength != 0) {
                        throw new GcsError(400, "invalid", "Content-Range " + header + " with a non-empty body");
                    }
                    return new ContentRange(null, null, total);
                }
                int dash = range.indexOf('-');
                if (dash < 0) {
                    throw bad(header);
                }
                long first = Long.parseLong(range.substring(0, dash));
                String lastText = range.substring(dash + 1);
                if (first < 0) {
                    throw bad(header);
                }
                if (lastText.equals("*")) {
                    // Open-ended: the body itself says where the range ends. With an unknown total it is the
                    // rest of the object, so the object is FIRST + body bytes long.
                    long last = first + bodyLength - 1;
                    long knownTotal = total != null ? total : first + bodyLength;
                    if (last >= knownTotal) {
                        throw new GcsError(400, "invalid", "Content-Range " + header + " with a body of "
                                + bodyLength + " bytes runs past the total");
                    }
                    return new ContentRange(first, last, knownTotal);
                }
                long last = Long.parseLong(lastText);
                if (last < first || last - first + 1 != bodyLength || (total != null && last >= total)) {
                    throw new GcsError(400, "invalid", "Content-Range " + header + " does not match a body of "
                            + bodyLength + " bytes");
                }
                return new ContentRange(first, last, total);
            } catch (NumberFormatException e) {
                throw bad(header);
            }
        }

        private static GcsError bad(String header) {
            return new GcsError(400, "invalid", "Malformed Content-Range: " + header);
        }
    }
}
