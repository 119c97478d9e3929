package dev.redlockd.bench;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;

/** Redisson's {@code RPermitExpirableSemaphore} on one node: a permit per id with its own lease. */
final class RedissonSemaphoreContender implements Contender {
  private final RedissonClient client;
  private final int permits;
  private final Map<String, RPermitExpirableSemaphore> semaphores = new ConcurrentHashMap<>();

  RedissonSemaphoreContender(String uri, int permits) {
    this.client = RedissonClients.singleServer(uri);
    this.permits = permits;
  }

  @Override
  public String name() {
    return "Redisson RPermitExpirableSemaphore (1 node, N = " + permits + ")";
  }

  @Override
  public String how() {
    return "Redisson " + Versions.of("redisson") + " RPermitExpirableSemaphore on node 1 (single-server client, "
        + "defaults), trySetPermits(" + permits + ") once per semaphore: tryAcquireAsync(wait 0, lease 10 s) "
        + "then releaseAsync(permit id), in the bench JVM";
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    RPermitExpirableSemaphore semaphore = semaphores.computeIfAbsent(resource, name -> {
      RPermitExpirableSemaphore made = client.getPermitExpirableSemaphore(name);
      made.trySetPermits(permits);
      return made;
    });
    return semaphore.tryAcquireAsync(0, 10, TimeUnit.SECONDS).toCompletableFuture().thenCompose(id -> {
      if (id == null) {
        throw new IllegalStateException("no free permit of " + resource);
      }
      return semaphore.releaseAsync(id).toCompletableFuture();
    });
  }

  @Override
  public void close() {
    client.shutdown();
  }
}
