package dev.redlockd.sim;

/**
 * A permit as a semaphore under test granted or renewed it.
 *
 * @param permit 1..N, or 0 when the semaphore has no permit identity (the naive mutant)
 * @param fence the fencing token, rising per (resource, permit); ignored when {@code permit} is 0
 */
record PermitGrant(String resource, String token, int permit, long validityNanos, long fence) {}
