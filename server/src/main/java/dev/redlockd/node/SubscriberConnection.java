package dev.redlockd.node;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's pub/sub connection, separate from the call connections: in subscribe mode Redis
 * answers nothing else, and messages arrive whenever they are published. Owned by one event
 * loop, every field touched on it only. Connects on the first subscription, and after a drop
 * again after a {@link ReconnectBackoff backoff}, subscribing every wanted channel anew.
 */
final class SubscriberConnection implements Subscriber, AttemptHandler.Connection {
  private static final Logger log = LoggerFactory.getLogger(SubscriberConnection.class);

  private final NettyRedisNode node;
  private final EventLoop loop;
  private final Bootstrap bootstrap;
  private final SSLContext tls;
  private final Listener listener;
  private final ReconnectBackoff backoff = new ReconnectBackoff();
  private final Set<String> wanted = new HashSet<>();
  private Channel channel;
  /** Bumped on every connect and drop, so that events of an older channel are ignored. */
  private int generation;
  /** Replies still owed to the handshake on this connection: whether each one must succeed. */
  private final ArrayDeque<Boolean> handshakeLeft = new ArrayDeque<>();
  private boolean reconnectScheduled;
  private boolean flushScheduled;
  private boolean closed;

  SubscriberConnection(NettyRedisNode node, EventLoop loop, Class<? extends Channel> channelType, long timeoutNanos,
      SSLContext tls, OffLoopResolver resolver, Listener listener) {
    this.node = node;
    this.loop = loop;
    this.tls = tls;
    this.listener = listener;
    this.bootstrap = new Bootstrap()
        .group(loop)
        .channel(channelType)
        .resolver(resolver)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
  }

  @Override
  public void subscribe(String name) {
    onLoop(() -> {
      if (!wanted.add(name)) {
        return;
      }
      if (channel == null) {
        connectUnlessWaiting();
      } else if (channel.isActive()) {
        write(List.of("SUBSCRIBE", name));
      }
    });
  }

  @Override
  public void unsubscribe(String name) {
    onLoop(() -> {
      if (wanted.remove(name) && channel != null && channel.isActive()) {
        write(List.of("UNSUBSCRIBE", name));
      }
    });
  }

  @Override
  public void close() {
    onLoop(() -> {
      closed = true;
      wanted.clear();
      drop();
    });
  }

  private void onLoop(Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      // The loop is shutting down, and this connection with it.
    }
  }

  private void connectUnlessWaiting() {
    if (!closed && !reconnectScheduled && !wanted.isEmpty()) {
      connect();
    }
  }

  private void connect() {
    int attempt = ++generation;
    NodeAddress address = node.address();
    ChannelFuture connecting = bootstrap.clone().handler(new ChannelInitializer<>() {
      @Override
      protected void initChannel(Channel ch) throws Exception {
        if (address.tls()) {
          ch.pipeline().addLast(new SslHandler(TlsEngines.client(tls == null ? SSLContext.getDefault() : tls, address)));
        }
        ch.pipeline().addLast(new RespDecoder(), new AttemptHandler(node, SubscriberConnection.this, attempt));
      }
    }).connect(address.host(), address.port());
    channel = connecting.channel();
    connecting.addListener(done -> {
      if (attempt != generation) {
        connecting.channel().close();
      } else if (!done.isSuccess()) {
        failed();
      } else {
        handshakeLeft.clear();
        for (List<String> command : node.handshake()) {
          // Login must succeed; naming the connection is a courtesy.
          handshakeLeft.add(!command.get(0).equals("CLIENT"));
          write(command);
        }
        if (!wanted.isEmpty()) {
          List<String> subscribe = new ArrayList<>(1 + wanted.size());
          subscribe.add("SUBSCRIBE");
          subscribe.addAll(wanted);
          write(subscribe);
        }
      }
    });
  }

  private void write(List<String> command) {
    channel.write(RespCommand.encode(channel.alloc(), command), channel.voidPromise());
    if (!flushScheduled) {
      flushScheduled = true;
      loop.execute(() -> {
        flushScheduled = false;
        if (channel != null) {
          channel.flush();
        }
      });
    }
  }

  @Override
  public void onReply(Object reply) {
    Boolean required = handshakeLeft.poll();
    if (required != null) {
      if (reply instanceof RedisErrorReply error && required) {
        node.noteRefusal(error); // a refused login: said once, where an operator looks
        failed();
      }
      return;
    }
    if (reply instanceof RedisErrorReply error && error.kind().equals("NOPERM")) {
      // Retrying cannot help until an operator changes the ACL; locks work without pub/sub.
      log.warn("Redis node {} refuses pub/sub ({}): callers waiting on other servers find out about a "
          + "release at their next retry; grant the ACL user its channels and +subscribe +publish "
          + "(docs/operating.md)", node.name(), error.getMessage());
      closed = true;
      drop();
      return;
    }
    if (!(reply instanceof List<?> push) || push.size() < 3 || !(push.get(0) instanceof String kind)
        || !(push.get(1) instanceof String name)) {
      failed();
      return;
    }
    switch (kind) {
      case "message" -> {
        if (wanted.contains(name) && push.get(2) instanceof String payload) {
          listener.message(name, payload);
        }
      }
      case "subscribe" -> {
        backoff.reset();
        if (wanted.contains(name)) {
          listener.subscribed(name);
        }
      }
      default -> { } // unsubscribe confirmations
    }
  }

  /** The connection failed or broke: connect again after the backoff, if anything is still wanted. */
  private void failed() {
    drop();
    if (closed || reconnectScheduled) {
      return;
    }
    reconnectScheduled = true;
    loop.schedule(() -> {
      reconnectScheduled = false;
      if (channel == null) {
        connectUnlessWaiting();
      }
    }, backoff.failedNanos(), TimeUnit.NANOSECONDS);
  }

  private void drop() {
    generation++;
    Channel old = channel;
    channel = null;
    if (old != null) {
      old.close();
    }
  }

  /** The end of the channel's pipeline; each instance belongs to one connect attempt. */

  @Override
  public int generation() {
    return generation;
  }

  @Override
  public void onFailure(Throwable cause) {
    failed();
  }
}
