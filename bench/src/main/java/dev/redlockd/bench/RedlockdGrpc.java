package dev.redlockd.bench;

import dev.redlockd.client.LockTokens;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import com.google.protobuf.Duration;
import io.grpc.ManagedChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real server (a separate JVM) driven over gRPC with the generated async stubs: Acquire
 * (ttl 10 s, no wait, a fresh client-made token as the Java client makes them), then Release
 * with that token.
 */
final class RedlockdGrpc implements Contender {
  static final Duration TTL = Duration.newBuilder().setSeconds(10).build();

  private final List<LockServiceGrpc.LockServiceStub> stubs;
  private final AtomicInteger next = new AtomicInteger();
  /** 0: a lock; N: one of N permits of a semaphore (AcquireRequest.permits). */
  private final int permits;
  /** Whether the server runs --thrifty-rounds (a row of its own). */
  private final boolean thrifty;

  RedlockdGrpc(List<ManagedChannel> channels) {
    this(channels, 0, false);
  }

  RedlockdGrpc(List<ManagedChannel> channels, int permits) {
    this(channels, permits, false);
  }

  RedlockdGrpc(List<ManagedChannel> channels, int permits, boolean thrifty) {
    this.stubs = channels.stream().map(LockServiceGrpc::newStub).toList();
    this.permits = permits;
    this.thrifty = thrifty;
  }

  @Override
  public String name() {
    if (permits != 0) {
      return "redlockd permit (N = " + permits + ")" + (thrifty ? ", thrifty rounds" : "");
    }
    return thrifty ? BenchRun.REDLOCKD_THRIFTY : BenchRun.REDLOCKD;
  }

  @Override
  public String how() {
    return "gRPC Acquire(ttl 10 s, no wait, fresh client token" + (permits == 0 ? "" : ", permits " + permits)
        + ") then Release, async stubs over " + stubs.size()
        + " channels, to the server jar in its own JVM (Redlock over the 5 nodes"
        + (thrifty ? ", --thrifty-rounds: each round asks a quorum of them first)" : ")");
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    LockServiceGrpc.LockServiceStub stub = stubs.get(Math.floorMod(next.getAndIncrement(), stubs.size()))
        .withDeadlineAfter(10, TimeUnit.SECONDS);
    String token = LockTokens.newToken();
    AcquireRequest acquire = AcquireRequest.newBuilder().setResource(resource).setTtl(TTL).setToken(token)
        .setPermits(permits).build();
    return GrpcChannels.unary(stub::acquire, acquire)
        .thenCompose(granted -> GrpcChannels.unary(stub::release, ReleaseRequest.newBuilder().setResource(resource)
            .setToken(token).setPermit(granted.getLease().getPermit()).build()))
        .thenAccept(released -> {
          if (!released.getReleased()) {
            throw new IllegalStateException("Release answered released=false for " + resource);
          }
        });
  }

  /** The size of a typical Acquire request, so the echo floor carries as many bytes. */
  static int typicalRequestBytes() {
    return AcquireRequest.newBuilder().setResource("lc:redlockd:128:127").setTtl(TTL)
        .setToken(LockTokens.newToken()).build().getSerializedSize();
  }

  @Override
  public void close() {}
}
