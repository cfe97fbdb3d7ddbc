package io.github.gcslock.sample;

import io.github.gcslock.LockNotAcquiredException;
import io.github.gcslock.LockRegistry;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per-tenant work through an injected {@link LockRegistry}: one instance at a time closes a tenant's
 * invoices, and the result is written with the lease's fencing token.
 */
@RestController
public class InvoiceController {

    private final LockRegistry locks;
    private final FencedResultStore results;

    public InvoiceController(LockRegistry locks, FencedResultStore results) {
        this.locks = locks;
        this.results = results;
    }

    @PostMapping("/tenants/{tenant}/invoices/close")
    public Map<String, Object> close(@PathVariable String tenant) throws InterruptedException {
        return locks.withLock("invoices/" + tenant, Duration.ofSeconds(5), lease -> {
            String result = "invoices of " + tenant + " closed at " + Instant.now();
            results.write("invoices-" + tenant, result, lease.fencingToken());
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("tenant", tenant);
            body.put("result", result);
            body.put("fencingToken", lease.fencingToken());
            return body;
        });
    }

    @GetMapping("/tenants/{tenant}/invoices")
    public ResponseEntity<Map<String, Object>> last(@PathVariable String tenant) {
        Map<String, Object> r = results.read("invoices-" + tenant);
        return r == null ? ResponseEntity.notFound().build() : ResponseEntity.ok(r);
    }

    @ExceptionHandler(LockNotAcquiredException.class)
    ResponseEntity<Map<String, Object>> busy(LockNotAcquiredException e) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", e.getMessage()));
    }

    @ExceptionHandler(FencedResultStore.StaleTokenException.class)
    ResponseEntity<Map<String, Object>> stale(FencedResultStore.StaleTokenException e) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", e.getMessage()));
    }
}
