package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A fake node for pure round logic (which node gets which follow-up call): answers each
 * script with a canned reply or a timeout, and records what it was sent. Claims about
 * Redis behaviour are tested against real redis-server processes, never with this.
 */
final class ScriptedNode implements RedisNode {
  private final String name;
  private final Function<String, Object> replies;
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
    return reply == null ? CompletableFuture.failedFuture(new TimeoutException()) : CompletableFuture.completedFuture(reply);
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    return CompletableFuture.failedFuture(new UnsupportedOperationException());
  }

  @Override
  public void close() {}
}
