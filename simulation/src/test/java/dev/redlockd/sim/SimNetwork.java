package dev.redlockd.sim;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * One-way latency between the replicas and each node: mostly a fraction of a millisecond,
 * sometimes a few milliseconds, and during a node's slow spell anything up to twice the node
 * timeout, so replies miss the timeout and arrive after it.
 */
final class SimNetwork {
  private final SimLoop loop;
  private final Random random;
  private final long nodeTimeoutNanos;
  private final Map<SimHost, Long> slowUntil = new HashMap<>();

  SimNetwork(SimLoop loop, Random random, long nodeTimeoutNanos) {
    this.loop = loop;
    this.random = random;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
  }

  long latency(SimHost host) {
    long base = 40_000 + (long) (-Math.log(1 - random.nextDouble()) * 60_000);
    if (slowUntil.getOrDefault(host, 0L) > loop.now()) {
      return base + (long) (random.nextDouble() * 2 * nodeTimeoutNanos);
    }
    if (random.nextInt(100) == 0) {
      return base + random.nextInt(5_000_000);
    }
    return base;
  }

  /** Whether a request on the wire when its connection drops is lost (else it still arrives). */
  boolean lostOnDrop() {
    return random.nextBoolean();
  }

  void slow(SimHost host, long forNanos) {
    slowUntil.put(host, loop.now() + forNanos);
  }
}
