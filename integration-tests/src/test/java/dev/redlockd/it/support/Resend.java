package dev.redlockd.it.support;

import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * Sends a raw KeepAlive or Campaign stream's request again, with a rising sequence, every
 * quarter of the ttl, as the clients do: the server takes a stream without a request for longer
 * than its ttl for a client that is gone, and stops renewing it. Stops when the stream ends or
 * this is closed; the test makes no other call on the stream meanwhile (a gRPC stream takes one
 * call at a time).
 */
public final class Resend implements AutoCloseable {
  private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "resend");
    t.setDaemon(true);
    return t;
  });

  private final ScheduledFuture<?> task;

  private Resend(ScheduledFuture<?> task) {
    this.task = task;
  }

  /** {@code request} makes the request with a given sequence; the first one sent here is {@code firstSequence}. */
  public static <R> Resend everyQuarterOf(Duration ttl, StreamObserver<R> requests, LongFunction<R> request,
      long firstSequence, CompletableFuture<?> streamEnd) {
    return everyQuarterOf(ttl, (Consumer<R>) requests::onNext, request, firstSequence, streamEnd);
  }

  /** As above, each request sent by {@code send} (a probe's own send, say). */
  public static <R> Resend everyQuarterOf(Duration ttl, Consumer<R> send, LongFunction<R> request,
      long firstSequence, CompletableFuture<?> streamEnd) {
    long[] sequence = {firstSequence};
    long period = Math.max(1, ttl.toMillis() / 4);
    ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
    Runnable once = () -> {
      if (streamEnd.isDone()) {
        self[0].cancel(false);
        return;
      }
      try {
        send.accept(request.apply(sequence[0]++));
      } catch (IllegalStateException ended) {
        self[0].cancel(false);
      }
    };
    synchronized (self) {
      self[0] = TIMER.scheduleAtFixedRate(() -> {
        synchronized (self) {
          once.run();
        }
      }, period, period, TimeUnit.MILLISECONDS);
    }
    return new Resend(self[0]);
  }

  @Override
  public void close() {
    task.cancel(false);
  }
}
