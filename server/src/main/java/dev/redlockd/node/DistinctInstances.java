package dev.redlockd.node;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * At start-up: each node is asked once (its connection reads the instance's run_id before the
 * answer, see {@link InstanceIds}); two entries that reach one instance stop start-up. A node
 * that does not answer now is checked when it does, by its connections.
 */
public final class DistinctInstances {
  private DistinctInstances() {}

  /** Throws the first {@link SameInstanceException} found. */
  public static void check(List<? extends RedisNode> nodes) {
    List<CompletableFuture<Object>> pings = new ArrayList<>();
    for (RedisNode node : nodes) {
      pings.add(node.command("PING"));
    }
    // Every call is bounded by the node timeout, or the first contact's allowance; this is a backstop.
    long deadline = System.nanoTime() + RedisConnection.FIRST_CONTACT_NANOS + RedisConnection.STUCK_NANOS
        + TimeUnit.SECONDS.toNanos(1);
    for (CompletableFuture<Object> ping : pings) {
      try {
        ping.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
          if (t instanceof SameInstanceException same) {
            throw same;
          }
        }
      } catch (TimeoutException e) {
        // not answering now: its connections check it when it does
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
