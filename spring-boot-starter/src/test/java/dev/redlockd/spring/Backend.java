package dev.redlockd.spring;

import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.UntilAvailable;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What every test of this module talks to, started once for the whole run: 5 real redis-server
 * processes and the real server jar over a real socket (with ForceRelease allowed, to take a
 * lease away from its holder). Closed by JUnit when the run ends.
 */
final class Backend implements AutoCloseable {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(Backend.class);

  final RedisCluster redis;
  final ServerProcess server;
  private final ManagedChannel operator;

  private Backend(RedisCluster redis, ServerProcess server) {
    this.redis = redis;
    this.server = server;
    this.operator = io.grpc.Grpc.newChannelBuilder("127.0.0.1:" + server.port(), InsecureChannelCredentials.create())
        .build();
  }

  /** The run's backend, started by the first test that asks. */
  static Backend of(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Backend.class, k -> start(), Backend.class);
  }

  private static Backend start() {
    RedisCluster redis = RedisCluster.start(5);
    try {
      return new Backend(redis, ServerProcess.start("--redis", redis.redisFlag(), "--allow-force-release"));
    } catch (RuntimeException e) {
      redis.close();
      throw e;
    }
  }

  /** The value of {@code redlockd.targets}. */
  String target() {
    return "127.0.0.1:" + server.port();
  }

  /** A new channel to the server, as a second application instance would have; the caller shuts it down. */
  ManagedChannel newChannel() {
    return io.grpc.Grpc.newChannelBuilder(target(), InsecureChannelCredentials.create()).build();
  }

  /** Whether a quorum holds the lock on {@code resource} now, as Describe says. */
  boolean held(String resource) {
    return UntilAvailable.call(() -> operator()
        .describe(DescribeRequest.newBuilder().setResource(resource).build()).getHeld());
  }

  /** The fencing token of the lease that holds {@code resource} now, as Describe says. */
  long fencingToken(String resource) {
    return UntilAvailable.call(() -> operator()
        .describe(DescribeRequest.newBuilder().setResource(resource).build()).getFencingToken());
  }

  /** An operator's ForceRelease: the holder's lease is gone, its next renewal finds out. */
  void forceRelease(String resource) {
    UntilAvailable.call(() -> operator()
        .forceRelease(ForceReleaseRequest.newBuilder().setResource(resource).build()));
  }

  private LockServiceGrpc.LockServiceBlockingStub operator() {
    return LockServiceGrpc.newBlockingStub(operator).withDeadlineAfter(5, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws Exception {
    operator.shutdownNow();
    try {
      server.close();
    } finally {
      redis.resumeAll();
      redis.close();
    }
  }
}
