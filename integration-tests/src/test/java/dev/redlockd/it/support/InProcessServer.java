package dev.redlockd.it.support;

import dev.redlockd.server.RedlockdServer;
import dev.redlockd.testing.RedisCluster;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.util.List;

/**
 * Real redis-server processes and the server's real assembly (adapter, interceptors, metrics,
 * engine), with the gRPC calls carried in-process instead of over Netty: what a contract test
 * sees here is the service's doing, not the network's.
 */
public final class InProcessServer extends StartedServer {
  public InProcessServer(int nodes, String... flags) throws Exception {
    this(RedisCluster.start(nodes), flags);
  }

  /** A server over an existing cluster; closing the server closes the cluster too. */
  public InProcessServer(RedisCluster cluster, String... flags) throws Exception {
    this(InProcessServerBuilder.generateName(), cluster, flags);
  }

  private InProcessServer(String name, RedisCluster cluster, String... flags) throws Exception {
    super(cluster, List.of(), flags, config -> RedlockdServer.start(config, InProcessServerBuilder.forName(name)),
        server -> InProcessChannelBuilder.forName(name).build());
  }
}
