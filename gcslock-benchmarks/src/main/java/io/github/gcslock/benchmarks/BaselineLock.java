package io.github.gcslock.benchmarks;

/** A lock design to compare with gcslock: one attempt, and release. Waiting is the caller's loop. */
interface BaselineLock {

    /** One attempt; true if this client now holds the lock. */
    boolean tryLock(String name);

    /** Releases a lock this client holds. */
    void unlock(String name);
}
