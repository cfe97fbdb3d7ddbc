package io.github.gcslock.spring.actuate;

import io.github.gcslock.GcsLockConfigurationException;
import io.github.gcslock.GcsLockException;
import io.github.gcslock.LockInfo;
import io.github.gcslock.LockRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code /actuator/gcslocks}: every lock under the prefix with its holder and staleness;
 * {@code /actuator/gcslocks/{name}}: one lock; {@code DELETE /actuator/gcslocks/{name}?fencingToken=...}:
 * force-release, refused unless {@code gcslock.endpoint.force-release-enabled=true}. Reads make GCS requests.
 *
 * <p>Force-release deletes only the acquisition the administrator saw: the caller passes the
 * {@code fencingToken} read from {@code GET /actuator/gcslocks/{name}} (required; 400 without it) and
 * may pass its {@code metageneration} too. The delete is conditional on that generation, so a lock that
 * changed hands since it was read is not touched (409) — without this guard, a lock read a moment earlier
 * by the endpoint itself could have been released and re-acquired by a healthy new holder in between,
 * and the new holder's lock would be deleted. With {@code metageneration}, a lock refreshed since it was
 * read is refused too; without it, the delete is conditional on the metageneration the endpoint read
 * while checking that the object is a gcslock lock object. Objects without gcslock's metadata (anything
 * else stored under the prefix, or anywhere in the bucket with an empty prefix) are never deleted (409).
 * The reads answer 503 with the reason when GCS could not be asked.
 * Force-release responses: 200 released, 400 bad name or parameter, 403 disabled, 404 no such lock, 409 refused as
 * above, 503 GCS could not be asked.
 */
@Endpoint(id = "gcslocks")
public class GcsLocksEndpoint {

    /** Attempts when the holder refreshes (metageneration changes) between the read and the delete. */
    private static final int ATTEMPTS = 3;

    private final LockRegistry registry;
    private final boolean forceReleaseEnabled;

    /**
     * @param registry            the registry whose locks are listed and released
     * @param forceReleaseEnabled whether DELETE may release a lock ({@code gcslock.endpoint.force-release-enabled})
     */
    public GcsLocksEndpoint(LockRegistry registry, boolean forceReleaseEnabled) {
        this.registry = registry;
        this.forceReleaseEnabled = forceReleaseEnabled;
    }

    /**
     * Every lock under the prefix: 200 with {@code count} and {@code locks} (holder, fencing token, staleness);
     * 503 with the {@code error} when GCS could not be asked, as for one lock.
     */
    @ReadOperation
    public WebEndpointResponse<Object> locks() {
        List<LockInfo> locks;
        try {
            locks = registry.list();
        } catch (GcsLockException e) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", e.getMessage());
            return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("count", locks.size());
        body.put("locks", locks);
        return new WebEndpointResponse<>(body);
    }

    /** One lock (its name may contain {@code /}): 200 with its state, 404 when free, 400 bad name, 503 GCS not asked. */
    @ReadOperation
    public WebEndpointResponse<Object> lock(@Selector(match = Selector.Match.ALL_REMAINING) String[] name) {
        String lockName = String.join("/", name);
        Optional<LockInfo> info;
        try {
            info = registry.inspect(lockName);
        } catch (GcsLockConfigurationException e) {
            return error(lockName, e.getMessage(), WebEndpointResponse.STATUS_BAD_REQUEST);
        } catch (GcsLockException e) {
            return error(lockName, e.getMessage(), WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
        return info.<WebEndpointResponse<Object>>map(WebEndpointResponse::new)
                .orElseGet(() -> new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND));
    }

    /**
     * Force-releases the lock {@code name} if it is still the acquisition with {@code fencingToken}.
     *
     * @param fencingToken   the fencing token (GCS generation) the caller saw; required
     * @param metageneration the metageneration the caller saw; optional (see the class comment)
     */
    @DeleteOperation
    public WebEndpointResponse<Object> forceRelease(@Selector(match = Selector.Match.ALL_REMAINING) String[] name,
                                                    @Nullable String fencingToken, @Nullable String metageneration) {
        String lockName = String.join("/", name);
        if (!forceReleaseEnabled) {
            return error(lockName, "force release is disabled; set gcslock.endpoint.force-release-enabled=true to allow it", 403);
        }
        if (fencingToken == null || fencingToken.isBlank()) {
            return error(lockName, "fencingToken is required: pass the fencing token you saw in GET /actuator/gcslocks/"
                    + lockName + ", e.g. DELETE /actuator/gcslocks/" + lockName + "?fencingToken=<fencingToken>; only that "
                    + "acquisition is deleted, never a holder you have not seen", WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        Long token = parse(fencingToken);
        Long seenMetageneration = metageneration == null || metageneration.isBlank() ? null : parse(metageneration);
        if (token == null || (metageneration != null && !metageneration.isBlank() && seenMetageneration == null)) {
            return error(lockName, "fencingToken and metageneration must be whole numbers as shown by GET /actuator/gcslocks/"
                    + lockName + "; got fencingToken=" + fencingToken
                    + (metageneration != null ? ", metageneration=" + metageneration : ""), WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        try {
            return forceRelease(lockName, token, seenMetageneration);
        } catch (GcsLockConfigurationException e) {
            return error(lockName, e.getMessage(), WebEndpointResponse.STATUS_BAD_REQUEST);
        } catch (GcsLockException e) {
            return error(lockName, e.getMessage(), WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
    }

    private WebEndpointResponse<Object> forceRelease(String lockName, long token, Long seenMetageneration) {
        for (int attempt = 1; ; attempt++) {
            Optional<LockInfo> read = registry.inspect(lockName);
            if (read.isEmpty()) {
                return error(lockName, "no such lock", WebEndpointResponse.STATUS_NOT_FOUND);
            }
            LockInfo info = read.get();
            if (info.owner() == null || info.leaseId() == null) {
                return error(lockName, "object '" + info.objectName() + "' carries no gcslock metadata: it is not a lock "
                        + "object, and force release deletes only lock objects", 409);
            }
            if (info.fencingToken() != token) {
                return refused(info, "the lock changed hands since you read it: its fencing token is now "
                        + info.fencingToken() + ", not " + token + "; read it again before releasing it");
            }
            if (seenMetageneration != null && info.metageneration() != seenMetageneration) {
                return refused(info, "the lock was refreshed since you read it: metageneration " + info.metageneration()
                        + ", not " + seenMetageneration + "; its holder is alive, read it again before releasing it");
            }
            // Conditional on the generation the caller saw and on the metageneration just read with the
            // gcslock metadata checked above: nothing else can be deleted, whatever happened in between.
            if (registry.forceRelease(lockName, token, info.metageneration())) {
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("name", lockName);
                body.put("released", true);
                body.put("fencingToken", token);
                body.put("owner", info.owner());
                return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
            }
            if (seenMetageneration != null || attempt == ATTEMPTS) {
                return refused(info, "the lock changed while being released (refreshed or taken over); read it again");
            }
            // Refreshed (or gone) between the read and the delete: read again; the generation check above
            // still refuses another acquisition.
        }
    }

    private static WebEndpointResponse<Object> refused(LockInfo info, String why) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", info.name());
        body.put("released", false);
        body.put("fencingToken", info.fencingToken());
        body.put("metageneration", info.metageneration());
        body.put("owner", info.owner());
        body.put("error", why);
        return new WebEndpointResponse<>(body, 409);
    }

    private static WebEndpointResponse<Object> error(String lockName, String message, int status) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", lockName);
        body.put("error", message);
        return new WebEndpointResponse<>(body, status);
    }

    private static Long parse(String number) {
        try {
            return Long.parseLong(number.trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
