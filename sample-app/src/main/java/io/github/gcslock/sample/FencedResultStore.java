package io.github.gcslock.sample;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A resource guarded by fencing tokens (seeds 002 and 004): each result object stores the token of
 * the lease that wrote it, and a write with a lower token than the stored one is refused. The
 * compare-and-set uses the object's generation, so two writers cannot both pass the check.
 *
 * <p>Safe whether or not GCS generations increase (GCS documents them as unique, not as increasing):
 * an equal token can only be the same lease writing again, and if a newer lease ever got a lower
 * token its writes would be refused here (visible, and reported by the registry as a fencing
 * regression) — a stale holder's write is never accepted over a newer one's.
 */
@Component
public class FencedResultStore {

    static final String TOKEN = "fencing-token";

    private final Storage storage;
    private final String bucket;

    public FencedResultStore(Storage storage, @Value("${gcslock.bucket:gcslock}") String bucket) {
        this.storage = storage;
        this.bucket = bucket;
    }

    /** Thrown when a write carries a fencing token older than the one the resource has seen. */
    public static class StaleTokenException extends RuntimeException {
        public StaleTokenException(String key, long token, long stored) {
            super("write to '" + key + "' with fencing token " + token + " refused: the result was already written "
                    + "with token " + stored + " by a newer lock holder");
        }
    }

    /** Writes {@code content} under {@code key} if {@code token} is not older than the stored one. */
    public void write(String key, String content, long token) {
        BlobId id = BlobId.of(bucket, "results/" + key);
        while (true) {
            Blob current = storage.get(id);
            long stored = current == null ? Long.MIN_VALUE : Long.parseLong(current.getMetadata().get(TOKEN));
            if (token < stored) {
                throw new StaleTokenException(key, token, stored);
            }
            BlobInfo info = BlobInfo.newBuilder(id).setMetadata(Map.of(TOKEN, Long.toString(token))).build();
            try {
                storage.create(info, content.getBytes(StandardCharsets.UTF_8),
                        Storage.BlobTargetOption.generationMatch(current == null ? 0 : current.getGeneration()));
                return;
            } catch (StorageException e) {
                if (e.getCode() != 412) {
                    throw e;
                }
                // Someone wrote in between: read again and re-check the token.
            }
        }
    }

    /** The stored result and its token, or null. */
    public Map<String, Object> read(String key) {
        Blob b = storage.get(BlobId.of(bucket, "results/" + key));
        if (b == null) {
            return null;
        }
        return Map.of("content", new String(b.getContent(), StandardCharsets.UTF_8),
                "fencingToken", Long.parseLong(b.getMetadata().get(TOKEN)));
    }
}
