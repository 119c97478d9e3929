package dev.redlockd.server;

import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.NodeState;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds the port closed until every node has answered a probe, for a short while at most. A
 * node counts only after the monitor has heard from it, and on a cold JVM the first probe often
 * misses the node timeout; without this, the first calls after a (re)start fail UNAVAILABLE
 * although every node is fine. Nodes that really are down only delay the start by the bound:
 * health then says NOT_SERVING until a quorum answers.
 */
final class StartupGate {
  private static final Logger log = LoggerFactory.getLogger(StartupGate.class);
  static final Duration MAX_WAIT = Duration.ofSeconds(3);

  private StartupGate() {}

  static void awaitNodes(LockEngine engine, Duration maxWait) {
    long deadline = System.nanoTime() + maxWait.toNanos();
    try {
      while (!silent(engine.nodeStates()).isEmpty()) {
        if (System.nanoTime() >= deadline) {
          log.info("opening the port although these Redis nodes have not answered yet: {}",
              silent(engine.nodeStates()));
          return;
        }
        Thread.sleep(10);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // shutting down before we started: let the caller see it
    }
  }

  private static List<String> silent(Map<String, NodeState> states) {
    return states.entrySet().stream()
        .filter(e -> e.getValue() == NodeState.UNKNOWN || e.getValue() == NodeState.DOWN)
        .map(Map.Entry::getKey)
        .toList();
  }
}
