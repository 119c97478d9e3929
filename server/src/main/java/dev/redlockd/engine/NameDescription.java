package dev.redlockd.engine;

/**
 * Everything held on one name (Describe): its lock and its semaphore. They are separate spaces,
 * so both may be held at once, and a description of one alone would hide the other.
 */
public record NameDescription(LockDescription lock, SemaphoreDescription semaphore) {}
