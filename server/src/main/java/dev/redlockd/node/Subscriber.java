package dev.redlockd.node;

/**
 * Pub/sub on one node: the channels asked for, delivered to one listener. Subscriptions outlive
 * the connection: after a reconnect every channel is subscribed again, and the listener hears
 * {@link Listener#subscribed} once more, because what was published meanwhile is lost.
 */
public interface Subscriber extends AutoCloseable {

  /** Called on an I/O thread, one call at a time per node. */
  interface Listener {
    void message(String channel, String payload);

    /** The node confirmed the channel: from now on its messages arrive (not before). */
    void subscribed(String channel);
  }

  /** For nodes that cannot subscribe: nothing is ever delivered. */
  Subscriber NONE = new Subscriber() {
    @Override
    public void subscribe(String channel) {}

    @Override
    public void unsubscribe(String channel) {}

    @Override
    public void close() {}
  };

  /** From any thread; calls for one channel take effect in the order made. */
  void subscribe(String channel);

  void unsubscribe(String channel);

  @Override
  void close();
}
