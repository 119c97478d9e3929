package dev.redlockd.sim;

import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * The simulation's fault schedule: a fault every 300-1500 ms of simulated time on a random
 * node (frozen, slow beyond the node timeout, its connections dropped, or restarted empty),
 * each healing on its own. Shared by the lock and the semaphore workloads, so both face the
 * same faults.
 */
final class SimFaults {
  private final SimLoop loop;
  private final List<SimHost> hosts;
  private final SimNetwork network;
  private final SimChecker checker;
  private final Random random;

  SimFaults(SimLoop loop, List<SimHost> hosts, SimNetwork network, SimChecker checker, Random random) {
    this.loop = loop;
    this.hosts = hosts;
    this.network = network;
    this.checker = checker;
    this.random = random;
  }

  /** Schedules faults until {@code end}; without {@code restarts}, a restart draw drops connections instead. */
  void schedule(long end, boolean restarts) {
    long at = loop.now();
    while (true) {
      at += Duration.ofMillis(300 + random.nextInt(1200)).toNanos();
      if (at >= end) {
        return;
      }
      SimHost host = hosts.get(random.nextInt(hosts.size()));
      int kind = random.nextInt(20);
      long length = Duration.ofMillis(20 + random.nextInt(2500)).toNanos();
      loop.at(at, () -> {
        switch (kind) {
          case 0, 1, 2, 3, 4, 5 -> {
            checker.event("FAULT freeze " + host.name + " for " + length / 1_000_000 + " ms");
            host.freeze();
            loop.after(length, () -> {
              checker.event("FAULT thaw " + host.name);
              host.thaw();
            });
          }
          case 6, 7, 8, 9 -> {
            checker.event("FAULT slow " + host.name + " for " + length / 1_000_000 + " ms");
            network.slow(host, length);
          }
          case 10, 11, 12, 13, 14, 15, 16, 17, 18 -> drop(host);
          default -> {
            if (restarts) {
              checker.event("FAULT restart " + host.name + " empty");
              host.restartEmpty();
            } else {
              drop(host);
            }
          }
        }
      });
    }
  }

  private void drop(SimHost host) {
    checker.event("FAULT drop connections to " + host.name);
    host.dropConnections("fault");
  }

  void heal() {
    for (SimHost host : hosts) {
      host.thaw();
      network.slow(host, 0);
    }
  }
}
