package dev.redlockd.sim;

/**
 * The generator behind Redis's math.random: POSIX lrand48 (48-bit linear congruential, the top
 * 31 bits out), seeded with 0 when the Lua interpreter starts. Redis replaced Lua's
 * math.random with it so scripts are deterministic; LuaJ's would draw from an unseeded
 * java.util.Random, which the simulation cannot allow.
 */
final class Lrand48 {
  private static final long MULTIPLIER = 0x5DEECE66DL;
  private static final long MASK = (1L << 48) - 1;
  private long state;

  Lrand48() {
    seed(0);
  }

  /** srand48: the seed's 32 bits above the fixed low word 0x330E. */
  void seed(int seed) {
    state = (((long) seed & 0xFFFFFFFFL) << 16 | 0x330E) & MASK;
  }

  /** A value in [0, 2^31). */
  int next() {
    state = (state * MULTIPLIER + 0xB) & MASK;
    return (int) (state >>> 17);
  }

  /** Redis's math.random number in [0, 1): (lrand48() % INT32_MAX) / INT32_MAX. */
  double nextUnit() {
    return (double) (next() % Integer.MAX_VALUE) / (double) Integer.MAX_VALUE;
  }
}
