package dev.redlockd.election;

/**
 * The one order of terms, for candidacies and watches alike. A term is a fencing token: an
 * unsigned 64-bit number (uint64 on the wire, printed unsigned in announcements), so a term
 * past 2^63 still comes after every lower one, which a signed comparison would get backwards.
 */
final class Terms {
  private Terms() {}

  /** Negative, zero or positive as {@code a} comes before, is, or comes after {@code b}. */
  static int compare(long a, long b) {
    return Long.compareUnsigned(a, b);
  }

  static boolean after(long a, long b) {
    return compare(a, b) > 0;
  }

  static long later(long a, long b) {
    return after(a, b) ? a : b;
  }
}
