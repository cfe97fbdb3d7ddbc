package io.github.gcslock;

/**
 * A registry setting or a lock name is invalid. {@link #setting()} names the builder setting at fault
 * (e.g. {@code refreshInterval}) so that a framework can map it to its own property name.
 */
public class GcsLockConfigurationException extends IllegalArgumentException {

    private final String setting;

    public GcsLockConfigurationException(String setting, String message) {
        super(message);
        this.setting = setting;
    }

    /** The builder setting at fault: {@code bucket}, {@code prefix}, {@code ttl}, {@code refreshInterval}, {@code name}, ... */
    public String setting() {
        return setting;
    }
}
