package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** What one node answered to one call: a value, or the failure (timeout, connection, error). */
record NodeResult<T>(RedisNode node, T value, Throwable failure) {

  boolean answered() {
    return failure == null;
  }

  /**
   * Sends to every node at once and completes when all have answered or failed; never
   * exceptionally. Each node call is bounded by the node timeout, so this is too.
   */
  static <T> CompletableFuture<List<NodeResult<T>>> fromAll(
      List<RedisNode> nodes, Function<RedisNode, CompletableFuture<T>> call) {
    List<CompletableFuture<NodeResult<T>>> calls = new ArrayList<>(nodes.size());
    for (RedisNode node : nodes) {
      CompletableFuture<T> sent;
      try {
        sent = call.apply(node);
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      calls.add(sent.handle((value, failure) -> new NodeResult<>(node, value, failure)));
    }
    return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> calls.stream().map(CompletableFuture::join).toList());
  }
}
