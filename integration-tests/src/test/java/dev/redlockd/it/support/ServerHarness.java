package dev.redlockd.it.support;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.testing.RedisCluster;
import io.grpc.ManagedChannel;
import java.time.Duration;

/**
 * The real server over real redis-server processes, and a channel to it, whatever transport
 * carries the calls: contract suites take one of these so that they can run over each.
 */
public interface ServerHarness extends AutoCloseable {
  RedisCluster cluster();

  RedlockdServer server();

  /** The harness's own channel, which the stubs use; closed with the harness. */
  ManagedChannel channel();

  LockServiceGrpc.LockServiceBlockingStub blocking();

  LockServiceGrpc.LockServiceStub async();

  /** A channel of its own, as a second client process would have; the caller shuts it down. */
  ManagedChannel newChannel();

  /** Takes the lock with a token the server chooses, without waiting. */
  default Lease acquire(String resource, Duration ttl) {
    return blocking().acquire(AcquireRequest.newBuilder()
            .setResource(resource)
            .setTtl(LiveServer.proto(ttl))
            .build())
        .getLease();
  }

  /** Closes the channel, the server and the Redis processes. */
  @Override
  void close() throws InterruptedException;
}
