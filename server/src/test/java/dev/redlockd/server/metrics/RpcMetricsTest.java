package dev.redlockd.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.proto.v1.ReleaseResponse;
import dev.redlockd.testing.Scrape;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The interceptor's counting, over in-process gRPC and a stand-in LockService whose answers the
 * test chooses: every way a call can end is counted once, under the code the caller saw.
 */
class RpcMetricsTest {
  private static final String CALLS = "redlockd_rpc_calls_total";

  private final Metrics metrics = Metrics.on(System::nanoTime);
  private final StandIn service = new StandIn();
  private Server server;
  private ManagedChannel channel;
  private LockServiceGrpc.LockServiceBlockingStub blocking;

  @BeforeEach
  void start() throws Exception {
    metrics.serve(InetAddress.getLoopbackAddress(), 0);
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(metrics.meter(service.bindService())).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    blocking = LockServiceGrpc.newBlockingStub(channel);
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    metrics.close();
  }

  @Test
  void unaryCallsAreCountedByMethodAndCodeAndTimed() {
    blocking.acquire(acquire("free"));
    blocking.acquire(acquire("free"));
    assertThat(codeOf(() -> blocking.acquire(acquire("held")))).isEqualTo(Status.Code.ABORTED);
    blocking.release(ReleaseRequest.newBuilder().setResource("free").build());

    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
      Scrape s = scrape();
      assertThat(s.value(CALLS, "method", "Acquire", "code", "OK")).isEqualTo(2);
      assertThat(s.value(CALLS, "method", "Acquire", "code", "ABORTED")).isEqualTo(1);
      assertThat(s.value(CALLS, "method", "Release", "code", "OK")).isEqualTo(1);
      assertThat(s.value(CALLS)).isEqualTo(4);
      assertThat(s.value("redlockd_rpc_duration_seconds_count", "method", "Acquire")).isEqualTo(3);
      assertThat(s.value("redlockd_rpc_duration_seconds_count", "method", "Release")).isEqualTo(1);
      assertThat(s.value("redlockd_rpc_duration_seconds_bucket", "method", "Acquire", "le", "+Inf")).isEqualTo(3);
    });
  }

  @Test
  void aCallPastItsDeadlineCountsDeadlineExceededOnceEvenIfTheServiceAnswersLater() {
    Status.Code code = codeOf(() -> blocking.withDeadlineAfter(200, TimeUnit.MILLISECONDS).acquire(acquire("silent")));
    assertThat(code).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
        assertThat(scrape().value(CALLS, "method", "Acquire", "code", "DEADLINE_EXCEEDED")).isEqualTo(1));

    // The service's late answer to a caller already gone is not a second outcome.
    service.silent.join().onError(Status.UNAVAILABLE.asRuntimeException());
    Scrape s = scrape();
    assertThat(s.value(CALLS)).isEqualTo(1);
    assertThat(s.value("redlockd_rpc_duration_seconds_count", "method", "Acquire")).isEqualTo(1);
    // Timed from when the server saw the call, a little after the client's deadline clock started.
    assertThat(s.value("redlockd_rpc_duration_seconds_sum", "method", "Acquire")).isBetween(0.1, 5.0);
  }

  @Test
  void keepAliveStreamsAreCountedByHowTheyEndedAndNotTimed() throws Exception {
    // Half-close: the stand-in ends the stream OK, as the real service does after releasing.
    CompletableFuture<Status> halfClosed = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> first = LockServiceGrpc.newStub(channel).keepAlive(endsInto(halfClosed, null));
    first.onNext(KeepAliveRequest.newBuilder().setResource("r").build());
    first.onCompleted();
    assertThat(halfClosed.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);

    // Cancel: the client drops the stream, with no deadline anywhere near.
    CompletableFuture<Status> cancelled = new CompletableFuture<>();
    CompletableFuture<ClientCallStreamObserver<KeepAliveRequest>> requests = new CompletableFuture<>();
    LockServiceGrpc.newStub(channel).keepAlive(endsInto(cancelled, requests))
        .onNext(KeepAliveRequest.newBuilder().setResource("r").build());
    service.streamStarted.get(5, TimeUnit.SECONDS);
    requests.get().cancel("client gives up", null);

    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
      Scrape s = scrape();
      assertThat(s.value(CALLS, "method", "KeepAlive", "code", "OK")).isEqualTo(1);
      assertThat(s.value(CALLS, "method", "KeepAlive", "code", "CANCELLED")).isEqualTo(1);
      assertThat(s.value(CALLS)).isEqualTo(2);
      assertThat(s.has("redlockd_rpc_duration_seconds_count")).isFalse();
    });
  }

  private Scrape scrape() {
    return Scrape.of(metrics.port());
  }

  private static AcquireRequest acquire(String resource) {
    return AcquireRequest.newBuilder().setResource(resource).build();
  }

  private static Status.Code codeOf(Runnable call) {
    try {
      call.run();
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  private static ClientResponseObserver<KeepAliveRequest, KeepAliveResponse> endsInto(CompletableFuture<Status> end,
      CompletableFuture<ClientCallStreamObserver<KeepAliveRequest>> requests) {
    return new ClientResponseObserver<>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<KeepAliveRequest> stream) {
        if (requests != null) {
          requests.complete(stream);
        }
      }

      @Override
      public void onNext(KeepAliveResponse value) {}

      @Override
      public void onError(Throwable t) {
        end.complete(Status.fromThrowable(t));
      }

      @Override
      public void onCompleted() {
        end.complete(Status.OK);
      }
    };
  }

  /** Answers by resource name: "free" OK, "held" ABORTED, "silent" never (until the test says). */
  private static final class StandIn extends LockServiceGrpc.LockServiceImplBase {
    final CompletableFuture<StreamObserver<AcquireResponse>> silent = new CompletableFuture<>();
    final CompletableFuture<Void> streamStarted = new CompletableFuture<>();

    @Override
    public void acquire(AcquireRequest request, StreamObserver<AcquireResponse> responses) {
      switch (request.getResource()) {
        case "free" -> {
          responses.onNext(AcquireResponse.getDefaultInstance());
          responses.onCompleted();
        }
        case "held" -> responses.onError(Status.ABORTED.withDescription("held").asRuntimeException());
        default -> {
          ((io.grpc.stub.ServerCallStreamObserver<AcquireResponse>) responses).setOnCancelHandler(() -> { });
          silent.complete(responses);
        }
      }
    }

    @Override
    public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> responses) {
      responses.onNext(ReleaseResponse.newBuilder().setReleased(true).build());
      responses.onCompleted();
    }

    @Override
    public StreamObserver<KeepAliveRequest> keepAlive(StreamObserver<KeepAliveResponse> responses) {
      ((io.grpc.stub.ServerCallStreamObserver<KeepAliveResponse>) responses).setOnCancelHandler(() -> { });
      return new StreamObserver<>() {
        @Override
        public void onNext(KeepAliveRequest value) {
          streamStarted.complete(null);
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          responses.onCompleted();
        }
      };
    }
  }
}
