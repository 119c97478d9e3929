package dev.redlockd.node;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * At start-up: each node is asked once (its connection reads the instance's run_id before the
 * answer, see {@link InstanceIds}); two entries that reach one instance stop start-up. A node
 * that does not answer now is checked when it does, by its connections.
 */
public final class DistinctInstances {
  private DistinctInstances() {}

  /**
   * Throws the first {@link SameInstanceException} found. A node that does not answer is asked
   * again until its connection's handshake has had its time ({@link RedisConnection#FIRST_CONTACT_NANOS}):
   * on a cold JVM a first call can miss the node timeout while the handshake goes on.
   */
  public static void check(List<? extends RedisNode> nodes) {
    long deadline = System.nanoTime() + RedisConnection.FIRST_CONTACT_NANOS + TimeUnit.MILLISECONDS.toNanos(500);
    List<RedisNode> left = new ArrayList<>(nodes);
    while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
      List<CompletableFuture<Throwable>> pings = new ArrayList<>();
      for (RedisNode node : left) {
        pings.add(node.command("PING").handle((reply, failure) -> failure));
      }
      List<RedisNode> silent = new ArrayList<>();
      for (int i = 0; i < left.size(); i++) {
        Throwable failure = pings.get(i).join(); // each call is bounded by the node timeout
        for (Throwable t = failure; t != null; t = t.getCause()) {
          if (t instanceof SameInstanceException same) {
            throw same;
          }
        }
        // An error reply is an answer (a user may not run PING): its connection has read the
        // instance's run_id before it, which is all this asks.
        if (failure != null && !answered(failure)) {
          silent.add(left.get(i));
        }
      }
      left = silent;
      if (!left.isEmpty() && !pause()) {
        return; // interrupted: shutting down before we started
      }
    }
    // Still silent: checked by their connections when they answer.
  }

  private static boolean answered(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof RedisErrorReply) {
        return true;
      }
    }
    return false;
  }

  private static boolean pause() {
    try {
      Thread.sleep(20);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
