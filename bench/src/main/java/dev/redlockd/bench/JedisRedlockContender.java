package dev.redlockd.bench;

import dev.redlockd.client.LockTokens;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.LuaScript;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

/**
 * The design the server does not use, measured so that the choice stays honest: Redlock over
 * a JedisPool per node, each node's call a task on that node's own thread pool (a blocking
 * connection per call in flight, no pipelining), in the bench's JVM, so without gRPC. It runs
 * redlockd's own acquire.lua and release.lua, so each node does the same work as under the
 * server; a grant that needs the fence raised on a lagging node is not raised (the server's
 * rare extra round trip), so this row is if anything flattered.
 */
// JedisPool is deprecated in Jedis 8 (RedisClient replaces it); it is the pooled blocking
// client this design is about.
@SuppressWarnings("deprecation")
final class JedisRedlockContender implements Contender {
  private static final String PREFIX = "redlock:";
  private static final String TTL_MS = "10000";
  private static final LuaScript ACQUIRE = LuaScript.load(LockEngine.class, "acquire");
  private static final LuaScript RELEASE = LuaScript.load(LockEngine.class, "release");

  private final List<JedisPool> pools = new ArrayList<>();
  private final List<ExecutorService> threads = new ArrayList<>();
  private final AtomicLong rounds = new AtomicLong();

  JedisRedlockContender(List<String> redisUris, int maxInFlight) {
    for (String u : redisUris) {
      URI uri = URI.create(u);
      JedisPoolConfig config = new JedisPoolConfig();
      // One connection and one thread per cycle in flight, per node: never a wait for either.
      config.setMaxTotal(maxInFlight);
      config.setMaxIdle(maxInFlight);
      JedisPool pool = new JedisPool(config, uri.getHost(), uri.getPort());
      try (Jedis jedis = pool.getResource()) {
        jedis.set(PREFIX + "node:incarnation", "bench"); // the nodes were flushed: a new cluster
        jedis.scriptLoad(ACQUIRE.source());
        jedis.scriptLoad(RELEASE.source());
      }
      pools.add(pool);
      threads.add(Executors.newFixedThreadPool(maxInFlight, r -> {
        Thread t = new Thread(r, "jedis-redlock-" + uri.getPort());
        t.setDaemon(true);
        return t;
      }));
    }
  }

  @Override
  public String name() {
    return BenchRun.JEDIS_REDLOCK;
  }

  @Override
  public String how() {
    return "Redlock in this JVM over a JedisPool per node, each node's call a task on that node's thread pool "
        + "(one blocking connection per call in flight), redlockd's acquire.lua then release.lua on all "
        + pools.size() + " nodes, quorum " + quorum() + "; no gRPC";
  }

  private int quorum() {
    return pools.size() / 2 + 1;
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    String token = LockTokens.newToken();
    String round = Long.toString(rounds.incrementAndGet(), 36);
    String lock = PREFIX + "{" + resource + "}:lock";
    List<String> acquireKeys = List.of(lock, PREFIX + "node:incarnation", PREFIX + "{" + resource + "}:fence",
        PREFIX + "node:fence-max");
    List<String> acquireArgs = List.of(token, TTL_MS, "", round);
    List<String> releaseKeys = List.of(lock, PREFIX + "node:incarnation");
    return onAll(ACQUIRE, acquireKeys, acquireArgs).thenCompose(replies -> {
      long granted = replies.stream().filter(r -> ((Number) r.get(0)).longValue() == 1).count();
      return onAll(RELEASE, releaseKeys, List.of(token, lock + ":released", round)).thenAccept(released -> {
        if (granted < quorum()) {
          throw new IllegalStateException(granted + " of " + pools.size() + " nodes granted " + resource);
        }
      });
    });
  }

  /** The script on every node at once, each on its node's own threads; all replies, in node order. */
  private CompletableFuture<List<List<?>>> onAll(LuaScript script, List<String> keys, List<String> args) {
    List<CompletableFuture<List<?>>> calls = new ArrayList<>();
    for (int i = 0; i < pools.size(); i++) {
      JedisPool pool = pools.get(i);
      calls.add(CompletableFuture.supplyAsync(() -> {
        try (Jedis jedis = pool.getResource()) {
          return (List<?>) jedis.evalsha(script.sha1(), keys, args);
        }
      }, threads.get(i)));
    }
    return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
        .thenApply(done -> calls.stream().<List<?>>map(CompletableFuture::join).toList());
  }

  @Override
  public void close() {
    threads.forEach(ExecutorService::shutdownNow);
    pools.forEach(JedisPool::close);
  }
}
