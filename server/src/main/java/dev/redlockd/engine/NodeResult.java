package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

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
    return fromAll(nodes, call, null);
  }

  /** {@link #fromAll}, telling {@code timed} (if not null) as each node's call ends. */
  static <T> CompletableFuture<List<NodeResult<T>>> fromAll(
      List<RedisNode> nodes, Function<RedisNode, CompletableFuture<T>> call, Backlog.Round timed) {
    List<CompletableFuture<NodeResult<T>>> calls = new ArrayList<>(nodes.size());
    for (RedisNode node : nodes) {
      CompletableFuture<T> sent;
      try {
        sent = call.apply(node);
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      calls.add(sent.handle((value, failure) -> {
        if (timed != null) {
          timed.ended();
        }
        return new NodeResult<>(node, value, failure);
      }));
    }
    return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> calls.stream().map(CompletableFuture::join).toList());
  }

  /** Stands in for the answer of a node still being waited for; counts as not answered. */
  static final Throwable PENDING = new Exception("no answer yet") {
    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  };

  /**
   * A round that may be decided before every node has answered.
   *
   * @param decided the results as soon as {@code enough} holds for those in so far (the others
   *     {@link #PENDING}), else all of them
   * @param all every node's result, when the last is in
   */
  record Round<T>(CompletableFuture<List<NodeResult<T>>> decided, CompletableFuture<List<NodeResult<T>>> all) {}

  /**
   * Sends to every node at once, as {@link #fromAll}, and also says when {@code enough} holds.
   * Each answer is read by {@code reply}, given the node that answered (a reply it cannot read
   * counts as the node's failure), in the callback that records it, as it comes in: a thenApply
   * per node would cost a future and a completion more per node per round, and the clock watch
   * reads the time each answer came.
   */
  static <R, T> Round<T> untilEnough(List<RedisNode> nodes, Function<RedisNode, CompletableFuture<R>> call,
      BiFunction<RedisNode, R, T> reply, Predicate<List<NodeResult<T>>> enough) {
    return untilEnough(nodes, call, reply, enough, null);
  }

  /** {@link #untilEnough}, telling {@code timed} (if not null) as each node's call ends. */
  static <R, T> Round<T> untilEnough(List<RedisNode> nodes, Function<RedisNode, CompletableFuture<R>> call,
      BiFunction<RedisNode, R, T> reply, Predicate<List<NodeResult<T>>> enough, Backlog.Round timed) {
    int n = nodes.size();
    AtomicReferenceArray<NodeResult<T>> results = new AtomicReferenceArray<>(n);
    AtomicInteger left = new AtomicInteger(n);
    Round<T> round = new Round<>(new CompletableFuture<>(), new CompletableFuture<>());
    for (int i = 0; i < n; i++) {
      RedisNode node = nodes.get(i);
      CompletableFuture<R> sent;
      try {
        sent = call.apply(node);
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      int index = i;
      sent.whenComplete((answer, failure) -> {
        if (timed != null) {
          timed.ended();
        }
        results.set(index, read(node, answer, failure, reply));
        // Counted down before the snapshot, so the last one in sees every result set. Once
        // decided, only the last one in needs a snapshot.
        if (left.decrementAndGet() == 0) {
          List<NodeResult<T>> all = snapshot(nodes, results);
          round.decided().complete(all);
          round.all().complete(all);
        } else if (!round.decided().isDone()) {
          List<NodeResult<T>> sofar = snapshot(nodes, results);
          if (enough.test(sofar)) {
            round.decided().complete(sofar);
          }
        }
      });
    }
    return round;
  }

  private static <R, T> NodeResult<T> read(RedisNode node, R answer, Throwable failure,
      BiFunction<RedisNode, R, T> reply) {
    if (failure != null) {
      return new NodeResult<>(node, null, failure);
    }
    try {
      return new NodeResult<>(node, reply.apply(node, answer), null);
    } catch (RuntimeException e) {
      return new NodeResult<>(node, null, e);
    }
  }

  private static <T> List<NodeResult<T>> snapshot(List<RedisNode> nodes, AtomicReferenceArray<NodeResult<T>> results) {
    List<NodeResult<T>> sofar = new ArrayList<>(nodes.size());
    for (int i = 0; i < nodes.size(); i++) {
      NodeResult<T> r = results.get(i);
      sofar.add(r != null ? r : new NodeResult<>(nodes.get(i), null, PENDING));
    }
    return sofar;
  }
}
