package dev.redlockd.engine;

import java.util.List;

/**
 * A snapshot of a semaphore for operators (Describe). Carries no token by design.
 *
 * @param permits the semaphore's N as its limit keys hold it; 0 when no node knows of one
 * @param holders the permits a quorum of voting nodes hold, in permit order
 */
public record SemaphoreDescription(int permits, List<PermitDescription> holders) {
  public static final SemaphoreDescription NONE = new SemaphoreDescription(0, List.of());

  public SemaphoreDescription {
    holders = List.copyOf(holders);
  }

  /** N minus the permits held by a quorum, as read. */
  public int freePermits() {
    return Math.max(0, permits - holders.size());
  }

  /** One held permit: which, and its lease described as a lock's would be. */
  public record PermitDescription(int permit, LockDescription lease) {}
}
