package dev.redlockd.node;

import io.lettuce.core.resource.EventLoopGroupProvider;
import io.lettuce.core.resource.Transports;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Lends Lettuce the {@link RedisIo} loops instead of letting it start its own, so that its
 * connections live on the threads that serve gRPC, as the built-in client's do. The loops are
 * RedisIo's to stop: Lettuce's release and shutdown leave them running.
 */
final class SharedEventLoops implements EventLoopGroupProvider {
  private final RedisIo io;

  SharedEventLoops(RedisIo io) {
    this.io = io;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T extends EventLoopGroup> T allocate(Class<T> type) {
    // Lettuce picks its channel class on its own (epoll unless told otherwise); on loops of the
    // other transport no channel would register. Say so at the first connect, not as a hang.
    if (Transports.socketChannelClass() != io.channelType()) {
      throw new IllegalStateException("Lettuce would open " + Transports.socketChannelClass().getSimpleName()
          + " channels on redlockd's " + io.transport() + " loops, which take "
          + io.channelType().getSimpleName() + " (is io.lettuce.core.epoll set?)");
    }
    return (T) io.group();
  }

  @Override
  public int threadPoolSize() {
    return io.loops().size();
  }

  @Override
  public Future<Boolean> release(EventExecutorGroup group, long quietPeriod, long timeout, TimeUnit unit) {
    return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
  }

  @Override
  public Future<Boolean> shutdown(long quietPeriod, long timeout, TimeUnit unit) {
    return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
  }
}
