package io.github.gcslock.autoconfigure;

import io.github.gcslock.LockInfo;
import io.github.gcslock.LockRegistry;
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
 * {@code /actuator/gcslocks/{name}}: one lock; {@code DELETE /actuator/gcslocks/{name}}: force-release,
 * refused unless {@code gcslock.endpoint.force-release-enabled=true}. Reads make GCS requests.
 */
@Endpoint(id = "gcslocks")
public class GcsLocksEndpoint {

    private final LockRegistry registry;
    private final boolean forceReleaseEnabled;

    public GcsLocksEndpoint(LockRegistry registry, boolean forceReleaseEnabled) {
        this.registry = registry;
        this.forceReleaseEnabled = forceReleaseEnabled;
    }

    @ReadOperation
    public Map<String, Object> locks() {
        List<LockInfo> locks = registry.list();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("count", locks.size());
        body.put("locks", locks);
        return body;
    }

    @ReadOperation
    public WebEndpointResponse<Object> lock(@Selector(match = Selector.Match.ALL_REMAINING) String[] name) {
        Optional<LockInfo> info = registry.inspect(String.join("/", name));
        return info.<WebEndpointResponse<Object>>map(WebEndpointResponse::new)
                .orElseGet(() -> new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND));
    }

    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> forceRelease(@Selector(match = Selector.Match.ALL_REMAINING) String[] name) {
        String lockName = String.join("/", name);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", lockName);
        if (!forceReleaseEnabled) {
            body.put("error", "force release is disabled; set gcslock.endpoint.force-release-enabled=true to allow it");
            return new WebEndpointResponse<>(body, 403);
        }
        Optional<LockInfo> info = registry.inspect(lockName);
        if (info.isEmpty()) {
            body.put("released", false);
            body.put("error", "no such lock");
            return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_NOT_FOUND);
        }
        boolean released = registry.forceRelease(lockName, info.get().fencingToken(), info.get().metageneration());
        body.put("released", released);
        body.put("fencingToken", info.get().fencingToken());
        body.put("owner", info.get().owner());
        if (!released) {
            body.put("error", "the lock changed while being released (refreshed or taken over); read it again");
            return new WebEndpointResponse<>(body, 409);
        }
        return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
    }
}
