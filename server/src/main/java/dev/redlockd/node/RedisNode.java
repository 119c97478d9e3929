package dev.redlockd.node;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One Redis master, as the engine sees it: a place to run a script. Each call completes
 * within the node timeout, exceptionally when the node did not answer in time.
 */
public interface RedisNode extends AutoCloseable {

  /** host:port, safe for logs (never a password). */
  String name();

  /**
   * Runs the script with these keys and arguments. The reply is what Redis returned, with
   * integers as {@link Long}, bulk strings as {@link String} and arrays as {@link List}.
   */
  CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args);

  /** Runs a plain command (used at start-up, for configuration checks). */
  CompletableFuture<Object> command(String... args);

  /**
   * Pub/sub on this node, delivering to {@code listener}. Without it (the default) nothing is
   * delivered, and whoever listens falls back on polling.
   */
  default Subscriber subscriber(Subscriber.Listener listener) {
    return Subscriber.NONE;
  }

  @Override
  void close();
}
