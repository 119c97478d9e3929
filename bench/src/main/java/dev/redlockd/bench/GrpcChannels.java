package dev.redlockd.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/** Client channels and unary calls as futures, shared by the redlockd and echo contenders. */
final class GrpcChannels {
  private GrpcChannels() {}

  /**
   * Several channels, each its own HTTP/2 connection, so one connection's flow control and
   * event-loop thread are not what is measured. Netty from grpc-netty-shaded by name: the
   * server and jetcd put the unshaded grpc-netty on the same class path, and the redlockd
   * rows must use the transport a Java client would. Callbacks run on the event loop (direct executor): they
   * only send the next call, and a hop through a thread pool would add to every round trip
   * on two cores.
   */
  static List<ManagedChannel> open(int port, int count) {
    List<ManagedChannel> channels = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      channels.add(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().directExecutor().build());
    }
    return channels;
  }

  static void close(List<ManagedChannel> channels) throws InterruptedException {
    channels.forEach(ManagedChannel::shutdown);
    for (ManagedChannel c : channels) {
      if (!c.awaitTermination(5, TimeUnit.SECONDS)) {
        c.shutdownNow();
      }
    }
  }

  /** Runs one async unary call and completes with its single answer. */
  static <Q, R> CompletableFuture<R> unary(BiConsumer<Q, StreamObserver<R>> call, Q request) {
    CompletableFuture<R> answer = new CompletableFuture<>();
    call.accept(request, new StreamObserver<>() {
      @Override
      public void onNext(R value) {
        answer.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        answer.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        // Normally already answered: build no exception (and its stack trace) on every call.
        if (!answer.isDone()) {
          answer.completeExceptionally(new IllegalStateException("call ended without an answer"));
        }
      }
    });
    return answer;
  }
}
