package dev.redlockd.node;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.commands.ProtocolCommand;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.SafeEncoder;

/**
 * A node reached through its own JedisPool. Jedis blocks, so each node has a small thread
 * pool of its own, as large as its connection pool: a slow node ties up only its own
 * threads, and the node timeout bounds what a caller waits, queueing included.
 */
public final class JedisRedisNode implements RedisNode {
  private final NodeAddress address;
  private final Duration timeout;
  private final JedisPool pool;
  private final ExecutorService executor;

  public JedisRedisNode(NodeAddress address, Duration timeout, int connections) {
    this.address = address;
    this.timeout = timeout;
    int timeoutMs = (int) Math.max(1, timeout.toMillis());
    DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
        .connectionTimeoutMillis(timeoutMs)
        .socketTimeoutMillis(timeoutMs)
        .database(address.database())
        .clientName("redlockd")
        .autoNegotiateProtocol(false)
        .ssl(address.tls());
    address.user().ifPresent(client::user);
    address.password().ifPresent(client::password);
    GenericObjectPoolConfig<Jedis> poolConfig = new GenericObjectPoolConfig<>();
    poolConfig.setMaxTotal(connections);
    poolConfig.setMaxIdle(connections);
    poolConfig.setMinIdle(0);
    poolConfig.setMaxWait(timeout);
    // JMX registration would collide when tests run several engines in one JVM.
    poolConfig.setJmxEnabled(false);
    this.pool = new JedisPool(poolConfig, new HostAndPort(address.host(), address.port()), client.build());
    this.executor = new ThreadPoolExecutor(connections, connections, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), daemonThreads("redis-" + address.name()));
    ((ThreadPoolExecutor) executor).allowCoreThreadTimeOut(true);
  }

  @Override
  public String name() {
    return address.name();
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    return submit(jedis -> {
      try {
        return jedis.evalsha(script.sha1(), keys, args);
      } catch (JedisNoScriptException e) {
        // First use on this node, or it restarted: EVAL runs it and caches it again.
        return jedis.eval(script.source(), keys, args);
      }
    });
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    ProtocolCommand name = () -> SafeEncoder.encode(args[0]);
    return submit(jedis -> jedis.sendCommand(name, Arrays.copyOfRange(args, 1, args.length)));
  }

  private CompletableFuture<Object> submit(Function<Jedis, Object> call) {
    CompletableFuture<Object> result = new CompletableFuture<>();
    result.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
    try {
      executor.execute(() -> {
        if (result.isDone()) {
          return; // timed out while queued: the caller has moved on
        }
        try (Jedis jedis = pool.getResource()) {
          result.complete(decode(call.apply(jedis)));
        } catch (RuntimeException e) {
          result.completeExceptionally(e);
        }
      });
    } catch (RuntimeException rejected) {
      result.completeExceptionally(rejected);
    }
    return result;
  }

  /** Turns Jedis's byte[] bulk replies (from sendCommand) into Strings, recursively. */
  private static Object decode(Object reply) {
    if (reply instanceof byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
    if (reply instanceof List<?> list) {
      return list.stream().map(JedisRedisNode::decode).toList();
    }
    return reply;
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public void close() {
    executor.shutdownNow();
    pool.close();
  }

  @Override
  public String toString() {
    return "JedisRedisNode[" + address + "]";
  }
}
