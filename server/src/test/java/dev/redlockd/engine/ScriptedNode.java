package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * A fake node for pure round logic (which node gets which follow-up call): answers each
 * script with a canned reply or a timeout, and records what it was sent. Claims about
 * Redis behaviour are tested against real redis-server processes, never with this.
 *
 * <p>Its canned replies leave out the TIME that the granting, renewing and probing scripts
 * return: the node adds it, from a clock that runs with the test's replica clock, so that the
 * clock watch finds nothing to object to ({@link #watchedBy}).
 */
final class ScriptedNode implements RedisNode {
  /** What every fake node's wall clock reads when the test's replica clock reads 0. */
  static final long MICROS = 1_800_000_000_000_000L;

  private final String name;
  private final Function<String, Object> replies;
  private volatile LongSupplier replicaNanos = () -> 0L;
  /** Lock scripts sent, in order (the monitor's probes are left out). */
  final List<String> calls = new CopyOnWriteArrayList<>();

  ScriptedNode(String name, Function<String, Object> replies) {
    this.name = name;
    this.replies = replies;
  }

  static ScriptedNode silent(String name) {
    return new ScriptedNode(name, script -> null);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    if (!script.name().equals("probe")) {
      calls.add(script.name());
    }
    Object reply = replies.apply(script.name());
    return reply == null ? CompletableFuture.failedFuture(new TimeoutException())
        : CompletableFuture.completedFuture(timed(script.name(), reply, micros()));
  }

  /** The node's wall clock: the test's replica clock, moved by {@link #MICROS}. */
  long micros() {
    return MICROS + replicaNanos.getAsLong() / 1000;
  }

  /**
   * Gives the fake nodes among {@code nodes} the test's replica clock, and the monitor's clock
   * watch a history of every node: round logic is under test, not clocks.
   */
  static void watchedBy(NodeMonitor monitor, List<? extends RedisNode> nodes, LongSupplier clock) {
    for (RedisNode node : nodes) {
      if (node instanceof ScriptedNode scripted) {
        scripted.replicaNanos = clock;
      }
      long now = clock.getAsLong();
      monitor.clocks().anchor(node, now, now, MICROS + now / 1000);
    }
  }

  /** A canned reply as the script really answers: with the node's TIME where the script puts it. */
  static Object timed(String script, Object reply, long micros) {
    if (!(reply instanceof List<?> canned)) {
      return reply;
    }
    List<Object> full = new java.util.ArrayList<>(canned);
    String seconds = Long.toString(micros / 1_000_000);
    String rest = Long.toString(micros % 1_000_000);
    switch (script) {
      case "acquire", "acquire_permit", "restore" -> {
        full.add(seconds);
        full.add(rest);
      }
      case "extend", "extend_permits" -> {
        full.add(1, seconds);
        full.add(2, rest);
      }
      case "probe" -> full.addAll(List.of(seconds, rest, "", "scripted", ""));
      default -> {
        return reply;
      }
    }
    return full;
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    return CompletableFuture.failedFuture(new UnsupportedOperationException());
  }

  @Override
  public void close() {}
}
