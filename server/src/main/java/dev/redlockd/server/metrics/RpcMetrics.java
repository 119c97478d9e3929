package dev.redlockd.server.metrics;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Counts the calls of the services it intercepts by method and final status code, and times
 * the unary ones (a stream's length says how long a lease was kept, not how fast the server is).
 *
 * <p>A call is counted once, when it ends: with the status the service closed it with or, when
 * the client went away first, CANCELLED or DEADLINE_EXCEEDED (the service's own close of such a
 * call comes later, if at all, and is not counted again).
 */
final class RpcMetrics implements ServerInterceptor {
  private static final double[] SECONDS = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

  private static final long DEADLINE_RACE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private final Counter calls;
  private final Histogram durations;
  private final LongSupplier nanoClock;

  RpcMetrics(PrometheusRegistry registry, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.calls = Counter.builder()
        .name("redlockd_rpc_calls_total")
        .help("LockService calls by method and the gRPC status code they ended with; "
            + "KeepAlive counts streams")
        .labelNames("method", "code")
        .withoutExemplars()
        .register(registry);
    this.durations = Histogram.builder()
        .name("redlockd_rpc_duration_seconds")
        .help("Time from the start of a unary LockService call to its status, waiting included")
        .labelNames("method")
        .classicOnly()
        .classicUpperBounds(SECONDS)
        .withoutExemplars()
        .register(registry);
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
      ServerCallHandler<ReqT, RespT> next) {
    MethodDescriptor<ReqT, RespT> method = call.getMethodDescriptor();
    Outcome outcome = new Outcome(method.getBareMethodName(), method.getType() == MethodDescriptor.MethodType.UNARY,
        Context.current().getDeadline(), nanoClock.getAsLong());
    ServerCall.Listener<ReqT> listener;
    try {
      listener = next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
        @Override
        public void close(Status status, Metadata trailers) {
          outcome.ended(status.getCode());
          super.close(status, trailers);
        }
      }, headers);
    } catch (RuntimeException e) {
      // grpc closes such a call UNKNOWN itself, past the wrapper.
      outcome.ended(Status.Code.UNKNOWN);
      throw e;
    }
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onCancel() {
        outcome.cancelled();
        super.onCancel();
      }
    };
  }

  /** One call's way out, recorded once: close and cancel may race. */
  private final class Outcome {
    private final String method;
    private final boolean timed;
    private final Deadline deadline;
    private final long startNanos;
    private final AtomicBoolean recorded = new AtomicBoolean();

    Outcome(String method, boolean timed, Deadline deadline, long startNanos) {
      this.method = method;
      this.timed = timed;
      this.deadline = deadline;
      this.startNanos = startNanos;
    }

    /**
     * The listener hears a cancel without its reason. When the client's deadline runs out, the
     * client's cancel and the server's own deadline timer race (the server started its clock
     * when the headers arrived): a cancel this close to the deadline is the deadline.
     */
    void cancelled() {
      boolean deadlineReached = deadline != null
          && deadline.timeRemaining(TimeUnit.NANOSECONDS) <= DEADLINE_RACE_NANOS;
      ended(deadlineReached ? Status.Code.DEADLINE_EXCEEDED : Status.Code.CANCELLED);
    }

    void ended(Status.Code code) {
      if (!recorded.compareAndSet(false, true)) {
        return;
      }
      calls.labelValues(method, code.name()).inc();
      if (timed) {
        durations.labelValues(method).observe((nanoClock.getAsLong() - startNanos) / 1e9);
      }
    }
  }
}
