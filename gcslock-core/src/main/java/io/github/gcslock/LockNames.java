package io.github.gcslock;

/**
 * The rules every lock name must follow, for checking names before any lock is taken (a framework
 * checks the names in its annotations at start-up, so a bad name fails the deployment, not a run at 2 a.m.).
 */
public final class LockNames {

    private LockNames() {
    }

    /**
     * Checks {@code name} as the registry would: non-empty, at most 1024 bytes of UTF-8 together with
     * {@code prefix}, no control characters and none of {@code # [ ] * ?}, not a name GCS reserves.
     *
     * @param prefix the registry's object name prefix (e.g. {@code gcslock/})
     * @param name   the lock name
     * @throws GcsLockConfigurationException naming the lock and what is wrong with it
     */
    public static void check(String prefix, String name) {
        LockObject.validateName(prefix == null ? "" : prefix, name);
    }

    /**
     * Index of the first character not allowed anywhere in a lock name (a control character, or one of
     * {@code # [ ] * ?}, which break URLs and gsutil wildcards), or -1; for checking a fixed part of a name
     * whose rest is only known later.
     */
    public static int forbiddenCharAt(String part) {
        return LockObject.forbiddenCharAt(part);
    }
}
