package io.github.gcslock.test;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The metadata a client may set on an object, as the emulator stores it; a null field is not set.
 * {@code custom} is the object's {@code metadata} map (user key-value pairs). Holds and retention are
 * stored as given, not enforced. Immutable.
 */
record ObjectMetadata(String contentType, String cacheControl, String contentEncoding, String contentDisposition,
                      String contentLanguage, Map<String, String> custom, String customTime, Boolean temporaryHold,
                      Boolean eventBasedHold) {

    /** No metadata set. */
    static final ObjectMetadata NONE = new ObjectMetadata(null, null, null, null, null, null, null, null, null);

    ObjectMetadata {
        custom = custom == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(custom));
    }

    /** Whether no field is set. */
    boolean isEmpty() {
        return equals(NONE);
    }
}
