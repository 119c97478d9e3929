package dev.redlockd.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * Several server processes over the same real Redis nodes, as replicas of one service run
 * them; closed as one (every server, then the nodes, whatever fails on the way).
 */
public final class Replicas implements AutoCloseable {
  private final RedisCluster cluster;
  private final List<ServerProcess> servers;

  private Replicas(RedisCluster cluster, List<ServerProcess> servers) {
    this.cluster = cluster;
    this.servers = servers;
  }

  /** {@code nodes} Redis nodes and {@code count} servers with default flags over all of them. */
  public static Replicas start(int nodes, int count) {
    return start(nodes, count, new String[0]);
  }

  /** {@code nodes} Redis nodes and {@code count} servers over all of them, each with {@code flags} besides. */
  public static Replicas start(int nodes, int count, String... flags) {
    RedisCluster cluster = RedisCluster.start(nodes);
    List<ServerProcess> servers = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        List<String> args = new ArrayList<>(List.of("--redis", cluster.redisFlag()));
        args.addAll(List.of(flags));
        servers.add(ServerProcess.start(args.toArray(String[]::new)));
      }
    } catch (RuntimeException e) {
      new Replicas(cluster, servers).closeQuietly(e);
      throw e;
    }
    return new Replicas(cluster, List.copyOf(servers));
  }

  public RedisCluster cluster() {
    return cluster;
  }

  public ServerProcess server(int i) {
    return servers.get(i);
  }

  /** Every server's log, each under its own header: for a failure report. */
  public String logs() {
    StringBuilder all = new StringBuilder();
    for (int i = 0; i < servers.size(); i++) {
      all.append("== server ").append(i).append("'s log\n").append(servers.get(i).log()).append('\n');
    }
    return all.toString();
  }

  @Override
  public void close() throws Exception {
    Exception first = null;
    for (ServerProcess s : servers) {
      try {
        s.close();
      } catch (Exception e) {
        first = first == null ? e : first;
      }
    }
    cluster.close();
    if (first != null) {
      throw first;
    }
  }

  private void closeQuietly(RuntimeException cause) {
    try {
      close();
    } catch (Exception e) {
      cause.addSuppressed(e);
    }
  }
}
