package dev.redlockd.bench;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The transport floor: two echo round trips in a row per cycle, the same shape as Acquire
 * then Release, with a request as large as an Acquire, to a server in its own JVM. What
 * redlockd would cost if taking and giving back a lock were free.
 */
final class GrpcEcho implements Contender {
  private final List<ManagedChannel> channels;
  private final byte[] payload;
  private final AtomicInteger next = new AtomicInteger();

  GrpcEcho(List<ManagedChannel> channels, int payloadBytes) {
    this.channels = channels;
    this.payload = new byte[payloadBytes];
  }

  @Override
  public String name() {
    return BenchRun.ECHO;
  }

  @Override
  public String how() {
    return "two unary echo calls in a row (" + payload.length + "-byte request, the size of an Acquire), async, "
        + channels.size() + " channels, to an echo server in its own JVM (same Netty server transport as redlockd)";
  }

  @Override
  public CompletableFuture<Void> cycle(String resource) {
    ManagedChannel channel = channels.get(Math.floorMod(next.getAndIncrement(), channels.size()));
    return echo(channel).thenCompose(first -> echo(channel)).thenAccept(second -> {});
  }

  private CompletableFuture<byte[]> echo(ManagedChannel channel) {
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
    return GrpcChannels.unary((request, observer) -> ClientCalls.asyncUnaryCall(
        channel.newCall(GrpcEchoServer.ECHO, options), request, observer), payload);
  }

  @Override
  public void close() {}
}
