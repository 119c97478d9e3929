package dev.redlockd.node;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Which Redis instance (its {@code run_id}) each node's connections reach, shared by the nodes
 * of one server, so that one instance is never two nodes. Redlock's quorums intersect only if
 * each vote comes from a different instance: two entries that reach one instance (one written
 * two ways, a NAT, a DNS name moved) would count its vote twice.
 *
 * <p>Every connection reads the instance's run_id when it opens, before any reply to a call on
 * it is taken (Redis answers in order). The first node whose connection reaches an instance
 * owns it; a connection of another node that reaches it is refused (the node stays unavailable,
 * so its vote can only go missing, never count twice) until that node reaches a different
 * instance, or until the owner's connections have all reached other ones. A connection keeps
 * its last instance while it reconnects, so an owner that is merely down keeps its instance.
 *
 * <p>When an owner gives an instance up, another node may take it only after {@link #linger}:
 * by then every call sent to the owner before it gave the instance up has been answered or
 * failed (the node timeout, and the stuck bound after it), so no round holds an answer from
 * the instance through both nodes.
 */
public final class InstanceIds {
  private record Seen(NettyRedisNode node, String runId) {}

  private record Released(NettyRedisNode node, long atNanos) {}

  /** The last instance each connection reached; kept while it reconnects. */
  private final Map<Object, Seen> seen = new HashMap<>();
  private final Map<String, Released> released = new HashMap<>();

  /** A refusal or an acceptance; {@code owner} is the node that holds the instance when refused. */
  record Verdict(NettyRedisNode owner) {
    boolean accepted() {
      return owner == null;
    }
  }

  private static final Verdict ACCEPTED = new Verdict(null);

  /**
   * A connection of {@code node} reached the instance {@code runId} (null: it could not tell),
   * at {@code nowNanos}; says whether the connection may serve the node.
   */
  synchronized Verdict reached(Object connection, NettyRedisNode node, String runId, long nowNanos) {
    Seen previous = seen.remove(connection);
    try {
      if (runId == null) {
        return ACCEPTED;
      }
      for (Seen other : seen.values()) {
        if (other.node != node && other.runId.equals(runId)) {
          return new Verdict(other.node);
        }
      }
      Released left = released.get(runId);
      if (left != null && left.node != node && nowNanos - left.atNanos < linger(left.node)) {
        return new Verdict(left.node);
      }
      seen.put(connection, new Seen(node, runId));
      released.remove(runId);
      return ACCEPTED;
    } finally {
      if (previous != null && !owns(previous.node, previous.runId)) {
        released.put(previous.runId, new Released(previous.node, nowNanos));
      }
    }
  }

  /** The node closed: its connections reach nothing any more. */
  synchronized void forget(NettyRedisNode node) {
    seen.values().removeIf(s -> s.node == node);
    released.values().removeIf(r -> r.node == node);
  }

  private boolean owns(NettyRedisNode node, String runId) {
    return seen.values().stream().anyMatch(s -> s.node == node && s.runId.equals(runId));
  }

  /** How long an instance given up by {@code node} stays its own. */
  static long linger(NettyRedisNode node) {
    return node.timeoutNanos() + DeadlineTimer.STUCK_NANOS + TimeUnit.MILLISECONDS.toNanos(100);
  }

  /** The run_id line of an {@code INFO server} reply; null when there is none. */
  static String runId(Object infoReply) {
    if (!(infoReply instanceof String text)) {
      return null;
    }
    for (String line : text.split("\r?\n")) {
      if (line.startsWith("run_id:")) {
        String id = line.substring("run_id:".length()).strip();
        return id.isEmpty() ? null : id;
      }
    }
    return null;
  }
}
