package dev.redlockd.engine;

import dev.redlockd.node.RedisNode;
import dev.redlockd.node.Subscriber;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What servers tell each other through the nodes' pub/sub: a notice is published on every node
 * and heard from each node that is up, so one node down loses nothing. A channel is subscribed
 * on every node while this server has a handler for it. Off (no subscriptions, nothing
 * published) when the server runs with cross-replica notices disabled; callers then rely on
 * their own retries.
 */
final class NodeEvents implements AutoCloseable {

  /** Called on an I/O thread. */
  interface Handler {
    void message(String payload);

    /** A node now delivers the channel: anything published before may have been missed. */
    void subscribed();
  }

  private final List<RedisNode> nodes;
  private final boolean enabled;
  private final List<Subscriber> subscribers = new ArrayList<>();
  private final ConcurrentHashMap<String, Handler> handlers = new ConcurrentHashMap<>();

  NodeEvents(List<RedisNode> nodes, boolean enabled) {
    this.nodes = nodes;
    this.enabled = enabled;
    Subscriber.Listener listener = new Subscriber.Listener() {
      @Override
      public void message(String channel, String payload) {
        Handler handler = handlers.get(channel);
        if (handler != null) {
          handler.message(payload);
        }
      }

      @Override
      public void subscribed(String channel) {
        Handler handler = handlers.get(channel);
        if (handler != null) {
          handler.subscribed();
        }
      }
    };
    for (RedisNode node : nodes) {
      subscribers.add(enabled ? node.subscriber(listener) : Subscriber.NONE);
    }
  }

  /**
   * Hands the channel's messages to {@code handler} until {@link #stop}. Calls for one channel
   * must not race each other (the caller orders them), so that subscribe and unsubscribe
   * reach each node in the order made.
   */
  void listen(String channel, Handler handler) {
    handlers.put(channel, handler);
    subscribers.forEach(s -> s.subscribe(channel));
  }

  void stop(String channel) {
    handlers.remove(channel);
    subscribers.forEach(s -> s.unsubscribe(channel));
  }

  /** Fire and forget, on every node: a notice that is lost costs a waiter its retry delay, nothing else. */
  void publish(String channel, String payload) {
    if (!enabled) {
      return;
    }
    for (RedisNode node : nodes) {
      node.command("PUBLISH", channel, payload);
    }
  }

  @Override
  public void close() {
    subscribers.forEach(Subscriber::close);
  }
}
