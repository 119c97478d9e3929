package dev.redlockd.bench;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/** Redisson's plain {@code RLock} on one node: no fault tolerance, the speed it buys. */
final class RedissonLockContender implements Contender {
  private final RedissonClient client;
  private final Map<String, RLock> locks = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();

  RedissonLockContender(String uri) {
    this.client = RedissonClients.singleServer(uri);
  }

  @Override
  public String name() {
    return BenchRun.REDISSON_LOCK;
  }

  @Override
  public String how() {
    return "Redisson " + Versions.of("redisson") + " RLock on node 1 (single-server client, "
        + "defaults): lockAsync(lease 10 s, fresh thread id) then unlockAsync, in the bench JVM";
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    RLock lock = locks.computeIfAbsent(resource, client::getLock);
    long id = ids.incrementAndGet();
    return lock.lockAsync(10, TimeUnit.SECONDS, id).toCompletableFuture()
        .thenCompose(locked -> lock.unlockAsync(id).toCompletableFuture());
  }

  @Override
  public void close() {
    client.shutdown();
  }
}
