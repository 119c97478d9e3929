package dev.redlockd.it.chaos;

/**
 * One write offered to a protected resource, in the order the resource handled them.
 *
 * @param writerBelievedValid the writer's own local deadline had not passed when the resource
 *     handled the write
 */
record Write(String resource, long leaseId, long fence, long atNanos, boolean accepted, boolean writerBelievedValid) {}
