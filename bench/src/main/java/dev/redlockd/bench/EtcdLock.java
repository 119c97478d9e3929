package dev.redlockd.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * etcd's lock service through jetcd: Lock(name, lease) then Unlock(key). One lease (ttl 10 s,
 * kept alive by jetcd) is granted up front and shared by every cycle, so a cycle is the two
 * lock calls and nothing else; each slot's name differs, so cycles never wait on each other.
 */
final class EtcdLock implements Contender {
  private final Client client;
  private final long lease;
  private final CloseableClient keepAlive;
  private final String version;

  EtcdLock(String endpoint, String version) throws Exception {
    this.client = Client.builder().endpoints(endpoint).build();
    this.version = version;
    this.lease = client.getLeaseClient().grant(10).get(30, TimeUnit.SECONDS).getID();
    this.keepAlive = client.getLeaseClient().keepAlive(lease, new StreamObserver<LeaseKeepAliveResponse>() {
      @Override
      public void onNext(LeaseKeepAliveResponse value) {}

      @Override
      public void onError(Throwable t) {
        System.err.println("etcd lease keep-alive failed: " + t);
      }

      @Override
      public void onCompleted() {}
    });
  }

  @Override
  public String name() {
    return BenchRun.ETCD;
  }

  @Override
  public String how() {
    return "etcd " + version + " (one member, loopback, temp data dir, default fsync) via jetcd "
        + Versions.of("jetcd") + ": Lock(name, shared lease granted once, ttl 10 s) then "
        + "Unlock(key), async, in the bench JVM";
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    return client.getLockClient().lock(ByteSequence.from(resource, StandardCharsets.UTF_8), lease)
        .thenCompose(locked -> client.getLockClient().unlock(locked.getKey()))
        .thenAccept(unlocked -> {});
  }

  @Override
  public void close() {
    keepAlive.close();
    try {
      client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      // the lease runs out by itself in 10 s, and etcd is stopped next
    } finally {
      client.close();
    }
  }
}
