package dev.redlockd.it.chaos;

/**
 * One permit held by a semaphore worker: from when the grant arrived to the last moment it
 * relied on it (before its Release was sent, never past its own deadline), in this JVM's
 * System.nanoTime.
 */
record PermitSection(String worker, int permit, long fence, long start, long end) {}
