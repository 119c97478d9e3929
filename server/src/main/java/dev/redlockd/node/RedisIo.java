package dev.redlockd.node;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The I/O threads: each runs one event loop that serves gRPC calls and holds one connection to
 * every Redis node. A call that arrives on a loop talks to Redis over that loop's connections
 * and is answered from the same loop, so a lock cycle crosses no thread boundary; whatever
 * the loop's calls write to a node in one pass goes out as one pipeline.
 */
public final class RedisIo implements AutoCloseable {
  private static volatile RedisIo shared;

  private final boolean epoll = Epoll.isAvailable();
  private final EventLoopGroup group;
  private final List<EventLoop> loops = new ArrayList<>();

  private RedisIo(int threads) {
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("redlockd-io", true), io);
    for (EventExecutor executor : group) {
      loops.add((EventLoop) executor);
    }
  }

  public static RedisIo start(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("at least one I/O thread");
    }
    return new RedisIo(threads);
  }

  /** One per process, never closed, for nodes made outside a server (tests, tools). */
  public static RedisIo shared() {
    RedisIo io = shared;
    if (io == null) {
      synchronized (RedisIo.class) {
        if (shared == null) {
          shared = new RedisIo(Math.max(2, Runtime.getRuntime().availableProcessors()));
        }
        io = shared;
      }
    }
    return io;
  }

  /** For the gRPC server, so that its calls run on these loops. */
  public EventLoopGroup group() {
    return group;
  }

  public Class<? extends ServerChannel> serverChannelType() {
    return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  public Class<? extends Channel> channelType() {
    return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** For the start-up log: epoll, or NIO where the native transport is missing. */
  public String transport() {
    return (epoll ? "epoll" : "NIO") + ", " + loops.size() + " I/O threads";
  }

  List<EventLoop> loops() {
    return loops;
  }

  @Override
  public void close() {
    if (this == shared) {
      return;
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
