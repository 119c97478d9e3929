package dev.redlockd.testing;

import dev.redlockd.server.dev.DevCluster;
import dev.redlockd.server.dev.RedisProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * N real redis-server processes on free ports for a test, with fault injection by node
 * index. {@link #close()} kills them all and removes their files.
 */
public final class RedisCluster implements AutoCloseable {
  private final DevCluster cluster;

  private RedisCluster(DevCluster cluster) {
    this.cluster = cluster;
  }

  public static RedisCluster start(int n) {
    return new RedisCluster(DevCluster.start(n));
  }

  public int size() {
    return cluster.nodes().size();
  }

  public RedisProcess node(int i) {
    return cluster.nodes().get(i);
  }

  public List<String> uris() {
    return cluster.uris();
  }

  /** The value of the server's {@code --redis} flag for these nodes. */
  public String redisFlag() {
    return String.join(",", uris());
  }

  /** SIGSTOP: the nodes hold their sockets but answer nothing. */
  public void pause(int... idx) {
    for (int i : idx) {
      node(i).pause();
    }
  }

  public void resume(int... idx) {
    for (int i : idx) {
      node(i).resume();
    }
  }

  public void resumeAll() {
    cluster.nodes().forEach(RedisProcess::resume);
  }

  public void kill(int... idx) {
    for (int i : idx) {
      node(i).kill();
    }
  }

  /** Kills and starts again on the same port: the nodes come back empty. */
  public void restart(int... idx) {
    for (int i : idx) {
      node(i).restart();
    }
  }

  public String get(int node, String key) {
    return (String) call(node, "GET", key);
  }

  /**
   * The token holding a lock key on a node, or null: a lock's value is the token, then a space
   * and the ids of the acquire rounds that wrote it.
   */
  public String lockHolder(int node, String lockKey) {
    String value = get(node, lockKey);
    return value == null ? null : value.split(" ", 2)[0];
  }

  public void flushAll(int node) {
    call(node, "FLUSHALL");
  }

  public Object call(int node, String... command) {
    try (RespClient client = new RespClient("127.0.0.1", node(node).port())) {
      return client.call(command);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    cluster.close();
  }
}
