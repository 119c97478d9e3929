package dev.redlockd.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerFlags;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Request bytes that are not a request of the method end with INVALID_ARGUMENT, on every RPC
 * and mid-stream on KeepAlive, without a log record from grpc-java; the server keeps serving,
 * and reflection still describes the service.
 */
class UnparseableRequestsTest {
  /** Field 1 (resource) says 8 bytes follow; only 2 do. */
  private static final byte[] TRUNCATED = {0x0a, 0x08, 'a', 'b'};
  private static final List<MethodDescriptor<?, ?>> METHODS = List.of(LockServiceGrpc.getAcquireMethod(),
      LockServiceGrpc.getExtendMethod(), LockServiceGrpc.getReleaseMethod(), LockServiceGrpc.getKeepAliveMethod(),
      LockServiceGrpc.getDescribeMethod(), LockServiceGrpc.getForceReleaseMethod());

  private static RedisCluster cluster;
  private static RedlockdServer server;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws IOException {
    cluster = RedisCluster.start(3);
    server = RedlockdServer.start(ServerConfig.parse(ServerFlags.forTest("--redis", cluster.redisFlag())),
        InProcessServerBuilder.forName("unparseable"));
    channel = InProcessChannelBuilder.forName("unparseable").build();
  }

  @AfterAll
  static void stop() {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (server != null) {
      server.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void everyRpcRefusesUnparseableBytesWithInvalidArgumentAndNoLogRecord() throws Exception {
    List<LogRecord> grpcLog = new CopyOnWriteArrayList<>();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
          grpcLog.add(record);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    // Keeps METHODS honest: a new RPC must be added to it.
    assertThat(new ArrayList<>(LockServiceGrpc.getServiceDescriptor().getMethods())).hasSameSizeAs(METHODS);
    Logger grpc = Logger.getLogger("io.grpc");
    grpc.addHandler(capture);
    try {
      for (MethodDescriptor<?, ?> method : METHODS) {
        Status status = new RawCall(channel, method).send(TRUNCATED).ended.get(10, TimeUnit.SECONDS);
        String message = method.getFullMethodName().replace("LockService/", "") + "Request";
        assertThat(status.getCode()).as("%s: %s", method.getFullMethodName(), status)
            .isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(status.getDescription())
            .startsWith("request is not a valid " + message + ": ")
            .contains("input ended unexpectedly");
      }
    } finally {
      grpc.removeHandler(capture);
    }
    assertThat(grpcLog).extracting(LogRecord::getMessage).isEmpty();
    assertLockCycleWorks(channel, "after-unparseable");
  }

  @Test
  void theStatusNamesTheProblemNeverTheRequest() throws Exception {
    String token = "s3cr3t-T0ken-that-must-not-leak-anywhere";
    byte[] whole = AcquireRequest.newBuilder().setResource("secret-resource").setToken(token)
        .setTtl(ProtoDurations.toProto(Duration.ofSeconds(5))).build().toByteArray();
    byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 3); // inside the token

    Status status = new RawCall(channel, LockServiceGrpc.getAcquireMethod()).send(cut).ended.get(10, TimeUnit.SECONDS);

    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).hasSizeLessThan(400).doesNotContain("s3cr3t").doesNotContain("secret-resource");
    assertThat(status.getCause()).isNull();
  }

  @Test
  void anEmptyMessageStillParsesAndReachesTheService() throws Exception {
    // Zero bytes are a valid (all-default) request: the service, not the parser, refuses it.
    Status status = new RawCall(channel, LockServiceGrpc.getAcquireMethod()).send(new byte[0])
        .ended.get(10, TimeUnit.SECONDS);
    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).doesNotContain("is not a valid");
  }

  @Test
  void anUnparseableLaterKeepAliveMessageEndsTheStreamLikeACancel() throws Exception {
    Lease lease = acquire(channel, "keepalive-unparseable", Duration.ofSeconds(3), Duration.ZERO);
    RawCall stream = keepAlive(channel, lease, Duration.ofSeconds(3));

    Status status = stream.send(TRUNCATED).ended.get(10, TimeUnit.SECONDS);

    assertThat(status.getCode()).as("%s", status).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).startsWith("request is not a valid redlock.v1.KeepAliveRequest: ")
        .doesNotContain(lease.getToken());
    await().atMost(Duration.ofSeconds(5)).until(() -> server.openStreams() == 0);
    // Like a cancel: not released, so still held for now...
    assertThat(codeOf(() -> acquire(channel, "keepalive-unparseable", Duration.ofSeconds(3), Duration.ZERO)))
        .isEqualTo(Status.Code.ABORTED);
    // ...but no longer renewed, so it runs out within its 3 s ttl.
    assertThat(acquire(channel, "keepalive-unparseable", Duration.ofSeconds(3), Duration.ofSeconds(8))
        .getFencingToken()).isGreaterThan(lease.getFencingToken());
  }

  @Test
  void reflectionStillDescribesTheService() throws Exception {
    FileDescriptorProto file = FileDescriptorProto.parseFrom(reflect(ServerReflectionRequest.newBuilder()
            .setFileContainingSymbol(LockServiceGrpc.SERVICE_NAME).build())
        .getFileDescriptorResponse().getFileDescriptorProto(0));
    ServiceDescriptorProto service = file.getServiceList().stream()
        .filter(s -> s.getName().equals("LockService")).findFirst().orElseThrow();
    assertThat(service.getMethodList()).extracting(MethodDescriptorProto::getName)
        .containsExactly("Acquire", "Extend", "Release", "KeepAlive", "Describe", "ForceRelease");
    assertThat(service.getMethodList()).extracting(MethodDescriptorProto::getInputType)
        .contains(".redlock.v1.AcquireRequest", ".redlock.v1.KeepAliveRequest");
    assertThat(reflect(ServerReflectionRequest.newBuilder().setListServices("*").build())
            .getListServicesResponse().getServiceList())
        .extracting(s -> s.getName()).contains(LockServiceGrpc.SERVICE_NAME);
  }

  /** A KeepAlive stream on this lease that has had its first answer. */
  private static RawCall keepAlive(ManagedChannel channel, Lease lease, Duration ttl) throws Exception {
    RawCall stream = new RawCall(channel, LockServiceGrpc.getKeepAliveMethod());
    stream.send(KeepAliveRequest.newBuilder()
        .setResource(lease.getResource())
        .setToken(lease.getToken())
        .setTtl(ProtoDurations.toProto(ttl))
        .build().toByteArray());
    KeepAliveResponse first = KeepAliveResponse.parseFrom(stream.firstAnswer.get(10, TimeUnit.SECONDS));
    assertThat(first.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    return stream;
  }

  private static Lease acquire(ManagedChannel channel, String resource, Duration ttl, Duration wait) {
    return LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS)
        .acquire(AcquireRequest.newBuilder()
            .setResource(resource)
            .setTtl(ProtoDurations.toProto(ttl))
            .setWait(ProtoDurations.toProto(wait))
            .build())
        .getLease();
  }

  private static void assertLockCycleWorks(ManagedChannel channel, String resource) {
    Lease lease = acquire(channel, resource, Duration.ofSeconds(5), Duration.ZERO);
    assertThat(LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build())
        .getReleased()).isTrue();
  }

  private static Status.Code codeOf(Runnable call) {
    try {
      call.run();
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  private static ServerReflectionResponse reflect(ServerReflectionRequest request) throws Exception {
    CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(channel)
        .serverReflectionInfo(new StreamObserver<>() {
          @Override
          public void onNext(ServerReflectionResponse response) {
            answer.complete(response);
          }

          @Override
          public void onError(Throwable t) {
            answer.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {}
        });
    requests.onNext(request);
    ServerReflectionResponse response = answer.get(5, TimeUnit.SECONDS);
    requests.onCompleted();
    return response;
  }

  /** A call that sends whatever bytes it is given, as a client in any language could. */
  private static final class RawCall {
    final CompletableFuture<Status> ended = new CompletableFuture<>();
    final CompletableFuture<byte[]> firstAnswer = new CompletableFuture<>();
    private final ClientCall<byte[], byte[]> call;
    private final boolean unary;

    RawCall(ManagedChannel channel, MethodDescriptor<?, ?> typed) {
      MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(typed.getType())
          .setFullMethodName(typed.getFullMethodName())
          .setRequestMarshaller(BYTES)
          .setResponseMarshaller(BYTES)
          .build();
      unary = typed.getType() == MethodDescriptor.MethodType.UNARY;
      call = channel.newCall(method, CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS));
      call.start(new ClientCall.Listener<>() {
        @Override
        public void onMessage(byte[] message) {
          firstAnswer.complete(message);
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
          ended.complete(status);
        }
      }, new Metadata());
      call.request(Integer.MAX_VALUE);
    }

    /** Sends one message; a unary call is half-closed after it. */
    RawCall send(byte[] message) {
      call.sendMessage(message);
      if (unary) {
        call.halfClose();
      }
      return this;
    }
  }

  private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  };
}
