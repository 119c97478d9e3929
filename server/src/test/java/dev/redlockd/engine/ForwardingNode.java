package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import dev.redlockd.node.Subscriber;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A real node passed through as it is, for a test to change what it needs; closing it leaves the real node to its owner. */
abstract class ForwardingNode implements RedisNode {
  protected final RedisNode real;

  ForwardingNode(RedisNode real) {
    this.real = real;
  }

  @Override
  public String name() {
    return real.name();
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    return real.eval(script, keys, args);
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    return real.command(args);
  }

  @Override
  public Subscriber subscriber(Subscriber.Listener listener) {
    return real.subscriber(listener);
  }

  @Override
  public void close() {}
}
