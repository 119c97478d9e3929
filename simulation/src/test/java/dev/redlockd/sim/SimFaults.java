package dev.redlockd.sim;

import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * The simulation's fault schedule: a fault every 300-1500 ms of simulated time on a random
 * node (frozen, slow beyond the node timeout, its connections dropped, restarted empty, or its
 * wall clock stepped by up to a minute either way), each healing on its own (a stepped clock
 * stays where it went). Shared by the lock and the semaphore workloads, so both face the same
 * faults.
 */
final class SimFaults {
  private final SimLoop loop;
  private final List<SimHost> hosts;
  private final SimNetwork network;
  private final SimChecker checker;
  private final Random random;
  /** Steps of up to a minute either way: larger than any ttl, so a step forward frees every lock there. */
  static final long MAX_STEP_MICROS = 60_000_000L;

  SimFaults(SimLoop loop, List<SimHost> hosts, SimNetwork network, SimChecker checker, Random random) {
    this.loop = loop;
    this.hosts = hosts;
    this.network = network;
    this.checker = checker;
    this.random = random;
  }

  /**
   * Schedules faults until {@code end}; without {@code quarantined} (for a design with no
   * quarantine), a draw of a restart or of a clock step drops connections instead.
   */
  void schedule(long end, boolean quarantined) {
    long at = loop.now();
    while (true) {
      at += Duration.ofMillis(300 + random.nextInt(1200)).toNanos();
      if (at >= end) {
        return;
      }
      SimHost host = hosts.get(random.nextInt(hosts.size()));
      int kind = random.nextInt(24);
      long length = Duration.ofMillis(20 + random.nextInt(2500)).toNanos();
      long step = (long) ((random.nextDouble() * 2 - 1) * MAX_STEP_MICROS);
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
          case 20, 21, 22, 23 -> {
            if (quarantined) {
              checker.event("FAULT clock of " + host.name + " stepped " + (step >= 0 ? "forward" : "back") + " by "
                  + Math.abs(step) / 1000 + " ms");
              host.stepClock(step);
            } else {
              drop(host);
            }
          }
          default -> {
            if (quarantined) {
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

  /**
   * How long after the run a key may still live by the clock of a node that was stepped back
   * (a liveness cost, no safety one): the end check waits for it, as it waits for every ttl.
   */
  long setBackNanos() {
    return hosts.stream().mapToLong(SimHost::steppedBackNanos).max().orElse(0);
  }

  void heal() {
    for (SimHost host : hosts) {
      host.thaw();
      network.slow(host, 0);
    }
  }
}
