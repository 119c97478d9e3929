package dev.redlockd.it.ops;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client end of one KeepAlive stream: its first response and how it ended. It sends a
 * request every ttl/4, as the clients do (a stream silent for longer than its ttl is no longer
 * renewed), until it is half-closed or ends.
 */
final class KeptStream implements ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> {
  private static final ScheduledExecutorService ASKS = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "kept-stream-asks");
    t.setDaemon(true);
    return t;
  });

  final CompletableFuture<KeepAliveResponse> first = new CompletableFuture<>();
  final CompletableFuture<Status> end = new CompletableFuture<>();
  private volatile ClientCallStreamObserver<KeepAliveRequest> requests;
  private long sequence; // guarded by this
  private boolean closed; // guarded by this
  private ScheduledFuture<?> asking; // guarded by this

  /** Opens a stream that keeps this lease and waits for the server's first answer. */
  static KeptStream keep(LockServiceGrpc.LockServiceStub stub, String resource, String token, Duration ttl)
      throws Exception {
    KeptStream stream = new KeptStream();
    stub.keepAlive(stream);
    KeepAliveRequest keep = KeepAliveRequest.newBuilder()
        .setResource(resource).setToken(token).setTtl(LiveServer.proto(ttl)).build();
    stream.ask(keep);
    stream.first.get(10, TimeUnit.SECONDS);
    synchronized (stream) {
      long period = ttl.toMillis() / 4;
      stream.asking = ASKS.scheduleAtFixedRate(() -> stream.ask(keep), period, period, TimeUnit.MILLISECONDS);
    }
    return stream;
  }

  private synchronized void ask(KeepAliveRequest keep) {
    if (!closed && !end.isDone()) {
      requests.onNext(keep.toBuilder().setSequence(++sequence).build());
    }
  }

  synchronized void halfClose() {
    stopAsking();
    requests.onCompleted();
  }

  private synchronized void stopAsking() {
    closed = true;
    if (asking != null) {
      asking.cancel(false);
    }
  }

  Status awaitEnd(Duration timeout) throws Exception {
    return end.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> requestStream) {
    this.requests = requestStream;
  }

  @Override
  public void onNext(KeepAliveResponse value) {
    first.complete(value);
  }

  @Override
  public void onError(Throwable t) {
    stopAsking();
    first.completeExceptionally(t);
    end.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    stopAsking();
    end.complete(Status.OK);
  }
}
