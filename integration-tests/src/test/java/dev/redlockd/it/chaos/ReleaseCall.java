package dev.redlockd.it.chaos;

/**
 * One release as its holder saw it: {@code released} is true only when the service confirmed
 * that it still held the lease and gave it up.
 */
record ReleaseCall(String resource, ClientKind kind, long sendNanos, boolean released) {}
