package dev.redlockd.it.support;

import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerFlags;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * What every harness does whatever carries the calls: start the real server over a cluster,
 * open a channel and its stubs, and close all of it (the cluster too) in order. Subclasses
 * say only how the server listens and how a channel reaches it. The server gets
 * {@link ServerFlags#forTest} (admission control off unless the flags set it).
 */
abstract class StartedServer implements ServerHarness {
  /** Starts the server on a transport of the subclass's choosing. */
  interface Start {
    RedlockdServer start(ServerConfig config) throws IOException;
  }

  public final RedisCluster cluster;
  public final RedlockdServer server;
  public final ManagedChannel channel;
  public final LockServiceGrpc.LockServiceBlockingStub blocking;
  public final LockServiceGrpc.LockServiceStub async;
  private final Function<RedlockdServer, ManagedChannel> channels;

  /** Closing the harness closes {@code cluster}, and so does a server that fails to start. */
  StartedServer(RedisCluster cluster, List<String> transportFlags, String[] flags, Start start,
      Function<RedlockdServer, ManagedChannel> channels) throws Exception {
    this.cluster = cluster;
    this.channels = channels;
    List<String> args = new ArrayList<>(transportFlags);
    args.addAll(List.of("--redis", cluster.redisFlag()));
    args.addAll(List.of(flags));
    try {
      server = start.start(ServerConfig.parse(ServerFlags.forTest(args).toArray(String[]::new)));
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    channel = newChannel();
    blocking = LockServiceGrpc.newBlockingStub(channel);
    async = LockServiceGrpc.newStub(channel);
  }

  @Override
  public RedisCluster cluster() {
    return cluster;
  }

  @Override
  public RedlockdServer server() {
    return server;
  }

  @Override
  public ManagedChannel channel() {
    return channel;
  }

  @Override
  public LockServiceGrpc.LockServiceBlockingStub blocking() {
    return blocking;
  }

  @Override
  public LockServiceGrpc.LockServiceStub async() {
    return async;
  }

  @Override
  public ManagedChannel newChannel() {
    return channels.apply(server);
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    try {
      server.close();
    } finally {
      cluster.close();
    }
  }
}
