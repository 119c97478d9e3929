package dev.redlockd.it.support;

import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real redis-server processes and the server's real assembly (adapter, interceptors, metrics,
 * engine), with the gRPC calls carried in-process instead of over Netty: what a contract test
 * sees here is the service's doing, not the network's.
 */
public final class InProcessServer implements ServerHarness {
  private final RedisCluster cluster;
  private final RedlockdServer server;
  private final String name = InProcessServerBuilder.generateName();
  private final ManagedChannel channel;
  private final LockServiceGrpc.LockServiceBlockingStub blocking;
  private final LockServiceGrpc.LockServiceStub async;

  public InProcessServer(int nodes, String... flags) throws Exception {
    this(RedisCluster.start(nodes), flags);
  }

  /** A server over an existing cluster; closing the server closes the cluster too. */
  public InProcessServer(RedisCluster cluster, String... flags) throws Exception {
    this.cluster = cluster;
    List<String> args = new ArrayList<>(List.of("--redis", cluster.redisFlag()));
    args.addAll(List.of(flags));
    try {
      server = RedlockdServer.start(ServerConfig.parse(args.toArray(String[]::new)),
          InProcessServerBuilder.forName(name));
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
    return InProcessChannelBuilder.forName(name).build();
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
