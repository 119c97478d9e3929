package dev.redlockd.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's Redlock, in process: a {@link RedissonRedLock} over one {@code RLock} per node,
 * each node its own single-server RedissonClient.
 *
 * <p>Redisson ties a lock to a thread id; the async calls take it as an argument, and a fresh
 * id per cycle plays the part of redlockd's fresh token. {@code lockAsync} with a lease time,
 * the form Redisson's documentation shows: without contention it takes the lock on its first
 * attempt, as redlockd's no-wait Acquire does.
 */
@SuppressWarnings("deprecation") // RedissonRedLock is deprecated upstream; it is what users of Redlock on Redisson run.
final class RedissonRedLockContender implements Contender {
  private final List<RedissonClient> clients = new ArrayList<>();
  private final Map<String, RedissonRedLock> locks = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();

  RedissonRedLockContender(List<String> uris) {
    for (String uri : uris) {
      clients.add(RedissonClients.singleServer(uri));
    }
  }

  @Override
  public String name() {
    return BenchRun.REDISSON_REDLOCK;
  }

  @Override
  public String how() {
    return "Redisson " + Versions.of("redisson")
        + " RedissonRedLock over " + clients.size() + " RLocks (one single-server RedissonClient per node, "
        + "defaults): lockAsync(lease 10 s, fresh thread id) then unlockAsync, in the bench JVM";
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    RedissonRedLock lock = locks.computeIfAbsent(resource,
        name -> new RedissonRedLock(clients.stream().map(c -> c.getLock(name)).toArray(RLock[]::new)));
    long id = ids.incrementAndGet();
    return lock.lockAsync(10, TimeUnit.SECONDS, id).toCompletableFuture()
        .thenCompose(locked -> lock.unlockAsync(id).toCompletableFuture());
  }

  @Override
  public void close() {
    clients.forEach(RedissonClient::shutdown);
  }
}
