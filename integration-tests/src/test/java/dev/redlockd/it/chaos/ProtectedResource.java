package dev.redlockd.it.chaos;

/**
 * What a lock protects, with the fencing check a real store would make: a write is taken only
 * with a fencing token above every one the store has taken before, or equal to the highest when
 * it comes from the same lease (a holder writes several times per lease). A holder that was
 * paused past its lease and writes after a newer holder did is refused; refusals are expected
 * and counted, not errors.
 */
final class ProtectedResource {
  private final String name;
  private final History history;
  private long highestFence; // guarded by this
  private long leaseOfHighest = -1; // guarded by this

  ProtectedResource(String name, History history) {
    this.name = name;
    this.history = history;
  }

  /**
   * Offers a write; true when it was taken.
   *
   * @param writerDeadlineNanos the writer's local deadline, kept with the write so the checker
   *     can tell a stale holder (refusal expected) from one that still held a valid lease
   */
  synchronized boolean write(long leaseId, long fence, long writerDeadlineNanos) {
    long now = System.nanoTime();
    int order = Long.compareUnsigned(fence, highestFence);
    boolean accepted = order > 0 || (order == 0 && leaseId == leaseOfHighest);
    if (accepted) {
      highestFence = fence;
      leaseOfHighest = leaseId;
    }
    // Logged under the lock, so the history holds this resource's writes in the order handled.
    history.write(new Write(name, leaseId, fence, now, accepted, now <= writerDeadlineNanos));
    return accepted;
  }
}
