package io.github.gcslock.test;

/** A GCS JSON-API error the emulator answers with: status, reason and message as GCS sends them. */
final class GcsError extends RuntimeException {

    final int status;
    final String reason;
    final String location;

    GcsError(int status, String reason, String message) {
        this(status, reason, message, null);
    }

    GcsError(int status, String reason, String message, String location) {
        super(message, null, false, false);
        this.status = status;
        this.reason = reason;
        this.location = location;
    }

    static String defaultReason(int status) {
        return switch (status) {
            case 400 -> "invalid";
            case 401 -> "required";
            case 403 -> "forbidden";
            case 404 -> "notFound";
            case 409 -> "conflict";
            case 412 -> "conditionNotMet";
            case 429 -> "rateLimitExceeded";
            case 500 -> "internalError";
            case 502 -> "badGateway";
            case 503 -> "backendError";
            case 504 -> "gatewayTimeout";
            default -> "unknown";
        };
    }
}
