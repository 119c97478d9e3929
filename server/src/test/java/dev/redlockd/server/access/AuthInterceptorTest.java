package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.metrics.Metrics;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingServerCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The interceptor between the transport and a stand-in KeepAlive service that records what it is
 * told: which requests reach it, and how it hears that a call is over.
 */
class AuthInterceptorTest {
  private static final String TOKEN_A = "token-of-team-a-0123456789";
  private static final String TOKEN_OPS = "token-of-ops-0123456789";
  private static final String POLICY = """
      {"version": 1, "identities": [
        {"identity": "team-a", "lock": ["a/"]},
        {"identity": "ops", "describe": [""]}
      ]}
      """;

  @TempDir
  Path dir;
  private Path policyFile;
  private Path tokenFile;
  private AccessControl control;
  private Server server;
  private ManagedChannel channel;
  /** What the service heard, in order: "message <resource>", "half-close", "cancel", "complete". */
  private final List<String> heard = new CopyOnWriteArrayList<>();
  /** Counted down once the transport has told the interceptor chain the call is over. */
  private final CountDownLatch transportDone = new CountDownLatch(1);
  private final LinkedBlockingQueue<String> messages = new LinkedBlockingQueue<>();

  @BeforeEach
  void start() throws Exception {
    policyFile = Files.writeString(dir.resolve("policy.json"), POLICY);
    tokenFile = Files.writeString(dir.resolve("tokens"), line("team-a", TOKEN_A) + line("ops", TOKEN_OPS));
    control = AccessControl.load(policyFile, tokenFile);
    String name = InProcessServerBuilder.generateName();
    ServerServiceDefinition service = ServerServiceDefinition.builder(LockServiceGrpc.SERVICE_NAME)
        .addMethod(LockServiceGrpc.getKeepAliveMethod(), new Recording())
        .build();
    // The last interceptor is the outermost: it sees the transport's events before the access check.
    server = InProcessServerBuilder.forName(name).directExecutor()
        .addService(ServerInterceptors.intercept(service, new AuthInterceptor(new Access(control, Metrics.off())),
            new TransportEnd()))
        .build().start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private static String line(String identity, String token) {
    return identity + " sha256:" + HexFormat.of().formatHex(TokenFile.sha256(token)) + "\n";
  }

  /** A KeepAlive stream presenting this token; the returned future completes with its end status. */
  private StreamObserver<KeepAliveRequest> open(String token, CompletableFuture<Status> end) {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return LockServiceGrpc.newStub(ClientInterceptors.intercept(channel,
        MetadataUtils.newAttachHeadersInterceptor(headers))).keepAlive(new StreamObserver<KeepAliveResponse>() {
          @Override
          public void onNext(KeepAliveResponse value) {
          }

          @Override
          public void onError(Throwable t) {
            end.complete(Status.fromThrowable(t));
          }

          @Override
          public void onCompleted() {
            end.complete(Status.OK);
          }
        });
  }

  private static KeepAliveRequest request(String resource) {
    return KeepAliveRequest.newBuilder().setResource(resource).build();
  }

  @Test
  void aRefusedStreamsServiceHearsItsEndOnceByOnCancel() throws Exception {
    CompletableFuture<Status> end = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> stream = open(TOKEN_A, end);
    stream.onNext(request("a/1"));
    assertThat(messages.poll(5, TimeUnit.SECONDS)).isEqualTo("a/1");
    stream.onNext(request("b/1"));
    assertThat(end.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(transportDone.await(5, TimeUnit.SECONDS)).as("the transport reported the call over").isTrue();
    assertThat(heard).containsExactly("message a/1", "cancel");
  }

  @Test
  void aTokenTakenOutOfTheTokenFileEndsItsOpenStreamUnauthenticatedAtTheNextMessage() throws Exception {
    CompletableFuture<Status> end = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> stream = open(TOKEN_A, end);
    stream.onNext(request("a/1"));
    assertThat(messages.poll(5, TimeUnit.SECONDS)).isEqualTo("a/1");

    Files.writeString(tokenFile, line("ops", TOKEN_OPS));
    assertThat(control.reload(true)).isEqualTo(AccessControl.Outcome.LOADED);
    stream.onNext(request("a/1"));
    Status status = end.get(5, TimeUnit.SECONDS);
    assertThat(status.getCode()).as(status.toString()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(status.getDescription()).contains("'team-a'", "KeepAlive", "'a/1'", "no longer known")
        .doesNotContain(TOKEN_A);
    assertThat(heard).containsExactly("message a/1", "cancel");
  }

  @Test
  void aTokenGivenToAnotherIdentityNoLongerSpeaksForTheFirst() throws Exception {
    CompletableFuture<Status> end = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> stream = open(TOKEN_A, end);
    stream.onNext(request("a/1"));
    assertThat(messages.poll(5, TimeUnit.SECONDS)).isEqualTo("a/1");

    Files.writeString(tokenFile, line("ops", TOKEN_A));
    assertThat(control.reload(true)).isEqualTo(AccessControl.Outcome.LOADED);
    stream.onNext(request("a/1"));
    assertThat(end.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
  }

  @Test
  void aGrantTakenOutOfThePolicyEndsItsOpenStreamPermissionDenied() throws Exception {
    CompletableFuture<Status> end = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> stream = open(TOKEN_A, end);
    stream.onNext(request("a/1"));
    assertThat(messages.poll(5, TimeUnit.SECONDS)).isEqualTo("a/1");

    Files.writeString(policyFile, POLICY.replace("\"lock\": [\"a/\"]", "\"lock\": [\"c/\"]"));
    assertThat(control.reload(true)).isEqualTo(AccessControl.Outcome.LOADED);
    stream.onNext(request("a/1"));
    assertThat(end.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(heard).containsExactly("message a/1", "cancel");
  }

  @Test
  void anOversizedCredentialIsUnauthenticatedWithoutReachingTheService() throws Exception {
    CompletableFuture<Status> end = new CompletableFuture<>();
    open("x".repeat(AuthInterceptor.MAX_CREDENTIAL_CHARS), end).onNext(request("a/1"));
    Status status = end.get(5, TimeUnit.SECONDS);
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(status.getDescription()).contains(Integer.toString(AuthInterceptor.MAX_CREDENTIAL_CHARS));
    assertThat(heard).isEmpty();
  }

  /** The stand-in service: asks for every request and records what it hears. */
  private final class Recording implements ServerCallHandler<KeepAliveRequest, KeepAliveResponse> {
    @Override
    public ServerCall.Listener<KeepAliveRequest> startCall(ServerCall<KeepAliveRequest, KeepAliveResponse> call,
        Metadata headers) {
      call.request(100);
      return new ServerCall.Listener<>() {
        @Override
        public void onMessage(KeepAliveRequest message) {
          heard.add("message " + message.getResource());
          messages.add(message.getResource());
        }

        @Override
        public void onHalfClose() {
          heard.add("half-close");
        }

        @Override
        public void onCancel() {
          heard.add("cancel");
        }

        @Override
        public void onComplete() {
          heard.add("complete");
        }
      };
    }
  }

  /** Outside the access check: counts down once the transport says the call is over, after passing it on. */
  private final class TransportEnd implements ServerInterceptor {
    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
        ServerCallHandler<ReqT, RespT> next) {
      return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
        @Override
        public void onCancel() {
          super.onCancel();
          transportDone.countDown();
        }

        @Override
        public void onComplete() {
          super.onComplete();
          transportDone.countDown();
        }
      };
    }
  }
}
