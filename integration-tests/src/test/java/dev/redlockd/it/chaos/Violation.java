package dev.redlockd.it.chaos;

/** One broken promise found by the checker, described with the numbers needed to look into it. */
record Violation(Kind kind, String description) {
  enum Kind {
    /** Two holders relied on the same resource at once, each within its own deadline. */
    OVERLAP,
    /** A grant requested after another grant had arrived carries a fencing token not above it. */
    FENCE_ORDER,
    /** The protected resource took a write whose fencing token did not rise (an audit of the resource). */
    STALE_WRITE_ACCEPTED,
    /** A holder within its own deadline was refused: a newer lease had already written. */
    VALID_WRITE_REFUSED,
    /** A grant whose whole Acquire call fell in a time when a majority of nodes could not vote. */
    GRANT_WITHOUT_QUORUM,
    /** More holders of a semaphore's permits at once than its N, or a permit outside 1..N. */
    PERMITS_OVER_LIMIT,
    /** A lock still held (a key on a node, or Acquire refused) after every client stopped and --max-ttl passed. */
    LOCK_LEFT_HELD,
    /** After every fault was healed and --max-ttl passed, a resource could not be acquired at all. */
    NOT_RECOVERED
  }

  @Override
  public String toString() {
    return kind + ": " + description;
  }
}
