package dev.redlockd.it.keepalive;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Real redis-server processes, the real server over Netty on a free port, and a channel to it. */
final class KeepAliveHarness implements AutoCloseable {
  final RedisCluster cluster;
  final RedlockdServer server;
  final ManagedChannel channel;
  final LockServiceGrpc.LockServiceBlockingStub blocking;
  final LockServiceGrpc.LockServiceStub async;

  KeepAliveHarness(int nodes, String... flags) throws Exception {
    cluster = RedisCluster.start(nodes);
    List<String> args = new ArrayList<>(List.of("--port", "0", "--redis", cluster.redisFlag()));
    args.addAll(List.of(flags));
    RedlockdServer started;
    try {
      started = RedlockdServer.start(ServerConfig.parse(args.toArray(String[]::new)));
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    server = started;
    channel = newChannel();
    blocking = LockServiceGrpc.newBlockingStub(channel);
    async = LockServiceGrpc.newStub(channel);
  }

  ManagedChannel newChannel() {
    return Grpc.newChannelBuilder("127.0.0.1:" + server.port(), InsecureChannelCredentials.create()).build();
  }

  Lease acquire(String resource, Duration ttl) {
    return blocking.acquire(AcquireRequest.newBuilder()
            .setResource(resource)
            .setTtl(proto(ttl))
            .build())
        .getLease();
  }

  static com.google.protobuf.Duration proto(Duration d) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  static Duration fromProto(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
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
