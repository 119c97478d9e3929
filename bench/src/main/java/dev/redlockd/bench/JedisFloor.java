package dev.redlockd.bench;

import dev.redlockd.client.LockTokens;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.params.SetParams;

/**
 * The one-node floor: the least a Redis lock can cost, one SET NX PX and one compare-and-delete
 * script on one node, from a pooled blocking client in the bench JVM. No quorum, no fencing,
 * no fault tolerance.
 */
// JedisPool is deprecated in Jedis 8 (RedisClient replaces it); a pooled blocking client is
// the plainest way to call one node, which is what a floor should be.
@SuppressWarnings("deprecation")
final class JedisFloor implements Contender {
  private static final String COMPARE_AND_DELETE =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  private static final long TTL_MS = 10_000;

  private final JedisPool pool;
  private final String release;

  JedisFloor(String redisUri, int maxInFlight) {
    URI uri = URI.create(redisUri);
    JedisPoolConfig config = new JedisPoolConfig();
    // One connection per cycle in flight: waiting for a pooled connection is not Redis' cost.
    config.setMaxTotal(maxInFlight);
    config.setMaxIdle(maxInFlight);
    this.pool = new JedisPool(config, uri.getHost(), uri.getPort());
    try (Jedis jedis = pool.getResource()) {
      this.release = jedis.scriptLoad(COMPARE_AND_DELETE);
    }
  }

  @Override
  public String name() {
    return BenchRun.FLOOR;
  }

  @Override
  public String how() {
    return "Jedis SET key token NX PX 10000, then EVALSHA compare-and-delete, on node 1 only; "
        + "JedisPool, one blocking thread per cycle in flight, fresh token each cycle";
  }

  @Override
  public boolean blocking() {
    return true;
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    String token = LockTokens.newToken();
    try (Jedis jedis = pool.getResource()) {
      if (!"OK".equals(jedis.set(resource, token, SetParams.setParams().nx().px(TTL_MS)))) {
        throw new IllegalStateException("SET NX refused on " + resource);
      }
      if (!Long.valueOf(1).equals(jedis.evalsha(release, 1, resource, token))) {
        throw new IllegalStateException("compare-and-delete found no lock on " + resource);
      }
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void close() {
    pool.close();
  }
}
