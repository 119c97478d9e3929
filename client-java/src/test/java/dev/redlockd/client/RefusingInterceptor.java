package dev.redlockd.client;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A server that refuses early, in front of a fake service: the first {@code refuse} calls or
 * streams of one method are read up to their first request and then ended UNAVAILABLE with the
 * trailer {@code grpc-retry-pushback-ms} (when {@code pushbackMs} is set), the way the real
 * server sheds load. Notes when every call of the method arrived and each refused first request.
 */
final class RefusingInterceptor implements ServerInterceptor {
  private final String method;
  private final String pushbackMs;
  private final AtomicInteger refuse;
  /** System.nanoTime() of every call of the method, refused or not, in order. */
  final List<Long> arrivals = new CopyOnWriteArrayList<>();
  /** The first request of each refused call, in order. */
  final List<Object> refused = new CopyOnWriteArrayList<>();

  RefusingInterceptor(String fullMethodName, int refuse, String pushbackMs) {
    this.method = fullMethodName;
    this.refuse = new AtomicInteger(refuse);
    this.pushbackMs = pushbackMs;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    if (!call.getMethodDescriptor().getFullMethodName().equals(method)) {
      return next.startCall(call, headers);
    }
    arrivals.add(System.nanoTime());
    if (refuse.getAndDecrement() <= 0) {
      return next.startCall(call, headers);
    }
    call.request(1);
    return new ServerCall.Listener<>() {
      private boolean closed;

      @Override
      public void onMessage(Q message) {
        refused.add(message);
        close();
      }

      @Override
      public void onHalfClose() {
        close();
      }

      private void close() {
        if (closed) {
          return;
        }
        closed = true;
        Metadata trailers = new Metadata();
        if (pushbackMs != null) {
          trailers.put(Pushback.KEY, pushbackMs);
        }
        call.close(Status.UNAVAILABLE.withDescription("refused early: too many at once"), trailers);
      }
    };
  }

  /** The gaps between consecutive arrivals, in milliseconds. */
  List<Double> gapsMs() {
    List<Double> gaps = new CopyOnWriteArrayList<>();
    for (int i = 1; i < arrivals.size(); i++) {
      gaps.add((arrivals.get(i) - arrivals.get(i - 1)) / 1e6);
    }
    return gaps;
  }
}
