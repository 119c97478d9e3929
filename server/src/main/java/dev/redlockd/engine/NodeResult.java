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

  /** Stands in for the answer of a node a thrifty round never asked; counts as not answered. */
  static final Throwable NOT_SENT = new Exception("not asked") {
    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  };

  /** Whether this node was asked at all (a thrifty round asks only as many as it needs). */
  boolean sent() {
    return failure != NOT_SENT;
  }

  /**
   * A thrifty round: sends to the fewest nodes of {@code order} (indexes into {@code nodes}) that
   * could make the {@code quorum} ({@link Quorum#firstAsks}), and for each answer that is not
   * {@code yes} (a refusal, an error, a timeout) at once to the next nodes of the order that can
   * stand in for it ({@link Quorum#next}), until a quorum said yes or no node is left that could
   * help. Decided when a quorum said yes, else once every node asked has answered; results are
   * indexed as {@code nodes}, with {@link #NOT_SENT} for the nodes never asked and
   * {@link #PENDING} for those still being waited for. Each call is bounded by the node
   * timeout, so the round takes at most one node timeout per widening.
   */
  static <R, T> Round<T> widening(List<RedisNode> nodes, int[] order, Quorum quorum,
      Function<RedisNode, CompletableFuture<R>> call, BiFunction<RedisNode, R, T> reply, Predicate<T> yes,
      Backlog.Round timed) {
    Widening<R, T> round = new Widening<>(nodes, order, quorum, call, reply, yes, timed);
    round.start();
    return round.round;
  }

  /** The state of one {@link #widening} round; every change under its lock, every send and completion outside it. */
  private static final class Widening<R, T> {
    private final List<RedisNode> nodes;
    private final int[] order;
    private final Quorum quorum;
    private final Function<RedisNode, CompletableFuture<R>> call;
    private final BiFunction<RedisNode, R, T> reply;
    private final Predicate<T> yes;
    private final Backlog.Round timed;
    private final Round<T> round = new Round<>(new CompletableFuture<>(), new CompletableFuture<>());
    private final List<NodeResult<T>> results;
    private final boolean[] asked; // guarded by this
    private final boolean[] said; // guarded by this
    /** Said yes, or not answered yet: the nodes that may still make the quorum. */
    private final boolean[] hopeful; // guarded by this
    private int inFlight; // guarded by this
    private boolean decided; // guarded by this

    Widening(List<RedisNode> nodes, int[] order, Quorum quorum, Function<RedisNode, CompletableFuture<R>> call,
        BiFunction<RedisNode, R, T> reply, Predicate<T> yes, Backlog.Round timed) {
      this.nodes = nodes;
      this.order = order;
      this.quorum = quorum;
      this.call = call;
      this.reply = reply;
      this.yes = yes;
      this.timed = timed;
      this.results = new ArrayList<>(nodes.size());
      for (RedisNode node : nodes) {
        results.add(new NodeResult<>(node, null, NOT_SENT));
      }
      this.asked = new boolean[nodes.size()];
      this.said = new boolean[nodes.size()];
      this.hopeful = new boolean[nodes.size()];
    }

    void start() {
      int[] first;
      synchronized (this) {
        first = topUp();
      }
      for (int i : first) {
        send(i);
      }
    }

    /** Marks as asked the nodes to send to next, so that the hopeful ones could make the quorum. */
    private int[] topUp() {
      int[] next = new int[nodes.size()];
      int count = 0;
      for (int i = quorum.next(order, asked, hopeful); i >= 0; i = quorum.next(order, asked, hopeful)) {
        asked[i] = true;
        hopeful[i] = true;
        inFlight++;
        results.set(i, new NodeResult<>(nodes.get(i), null, PENDING));
        next[count++] = i;
      }
      return java.util.Arrays.copyOf(next, count);
    }

    private void send(int index) {
      RedisNode node = nodes.get(index);
      CompletableFuture<R> answer;
      try {
        answer = call.apply(node);
      } catch (RuntimeException e) {
        answer = CompletableFuture.failedFuture(e);
      }
      answer.whenComplete((value, failure) -> {
        if (timed != null) {
          timed.ended();
        }
        answered(index, read(node, value, failure, reply));
      });
    }

    private void answered(int index, NodeResult<T> result) {
      int[] next = null;
      List<NodeResult<T>> decidedNow = null;
      List<NodeResult<T>> all = null;
      synchronized (this) {
        results.set(index, result);
        inFlight--;
        boolean good = result.answered() && yes.test(result.value());
        said[index] = good;
        hopeful[index] = good;
        if (!decided) {
          if (good && quorum.metBy(said)) {
            decided = true;
          } else {
            if (!good) {
              next = topUp();
            }
            if (inFlight == 0) {
              decided = true;
            }
          }
          if (decided) {
            decidedNow = List.copyOf(results);
          }
        }
        if (decided && inFlight == 0) {
          all = List.copyOf(results);
        }
      }
      if (decidedNow != null) {
        round.decided().complete(decidedNow);
      }
      if (all != null) {
        round.all().complete(all);
      }
      if (next != null) {
        for (int i : next) {
          send(i);
        }
      }
    }
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
