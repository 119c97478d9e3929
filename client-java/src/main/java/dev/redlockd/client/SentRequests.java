package dev.redlockd.client;

/**
 * When the last few KeepAlive requests were sent, by sequence. An answer echoes the sequence
 * the server had when its renewal began; normally one of the last two or three, so a short
 * ring is enough. One that has left the ring is too old to move the deadline anyway.
 */
final class SentRequests {
  static final long UNKNOWN = Long.MIN_VALUE;
  private static final int SIZE = 16;

  private final long[] sequences = new long[SIZE];
  private final long[] sentNanos = new long[SIZE];

  synchronized void record(long sequence, long nanos) {
    int slot = (int) Math.floorMod(sequence, (long) SIZE);
    sequences[slot] = sequence;
    sentNanos[slot] = nanos;
  }

  /** When the request with this sequence was sent, or {@link #UNKNOWN}. */
  synchronized long sentAt(long sequence) {
    int slot = (int) Math.floorMod(sequence, (long) SIZE);
    return sequence > 0 && sequences[slot] == sequence ? sentNanos[slot] : UNKNOWN;
  }
}
