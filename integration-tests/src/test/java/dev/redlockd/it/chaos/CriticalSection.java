package dev.redlockd.it.chaos;

/**
 * What one holder did with one lease: from the moment it had the grant and knew its deadline
 * ({@code startNanos}, after the answer arrived) to the moment it stopped touching the protected
 * resource ({@code endNanos}, taken before it sent its Release). {@code deadlineNanos} is the holder's own local deadline (send time of the
 * call that last granted or renewed it, plus the validity it returned), all on this JVM's
 * {@code System.nanoTime()}.
 */
record CriticalSection(String resource, String holder, ClientKind kind, long leaseId, long fence, long startNanos,
    long endNanos, long deadlineNanos) {

  /** The holder kept going past its own deadline (a simulated pause, or it noticed too late). */
  boolean overran() {
    return endNanos > deadlineNanos;
  }

  /**
   * The part of the section the holder was entitled to: up to its deadline. Past it, the lock
   * promises nothing and fencing has to protect the resource.
   */
  long reliedUntilNanos() {
    return Math.min(endNanos, deadlineNanos);
  }

  boolean reliedOnTheLock() {
    return reliedUntilNanos() > startNanos;
  }
}
