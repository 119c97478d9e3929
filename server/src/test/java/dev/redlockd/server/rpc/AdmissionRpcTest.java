package dev.redlockd.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.node.NettyRedisNode;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.RedisNode;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.server.access.Access;
import dev.redlockd.server.access.LeaseDesk;
import dev.redlockd.server.access.Shares;
import dev.redlockd.testing.RedisCluster;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which calls admission control refuses, over real Redis nodes: with the engine's lateness
 * set by the test, new Acquire calls and KeepAlive streams are refused with a pushback, and
 * nothing that renews or frees a lease is.
 */
class AdmissionRpcTest {
  private static final com.google.protobuf.Duration TTL = com.google.protobuf.Duration.newBuilder().setSeconds(10).build();
  private final AtomicReference<Duration> lateness = new AtomicReference<>(Duration.ZERO);
  private final List<String> refused = new CopyOnWriteArrayList<>();
  private RedisCluster cluster;
  private List<RedisNode> nodes;
  private LockEngine engine;
  private Server server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    cluster = RedisCluster.start(3);
    nodes = cluster.uris().stream()
        .map(uri -> (RedisNode) new NettyRedisNode(NodeAddress.parse(uri), Duration.ofMillis(500))).toList();
    engine = LockEngine.builder(nodes, EngineConfig.defaults()).build().start();
    Admission admission = new Admission(lateness::get, Duration.ofMillis(25), Duration.ofMillis(50), new Random(1),
        refused::add);
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(new LockServiceAdapter(engine,
        new OpenStreams(100), Access.open(), new LeaseDesk(engine, new Shares(Access.open())), false, admission).bind()).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    engine.close();
    nodes.forEach(RedisNode::close);
    cluster.close();
  }

  /** A KeepAlive stream's answers and end. */
  private static final class Stream implements StreamObserver<KeepAliveResponse> {
    final LinkedBlockingQueue<KeepAliveResponse> answers = new LinkedBlockingQueue<>();
    final CompletableFuture<Throwable> end = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> requests;

    @Override
    public void onNext(KeepAliveResponse value) {
      answers.add(value);
    }

    @Override
    public void onError(Throwable t) {
      end.complete(t);
    }

    @Override
    public void onCompleted() {
      end.complete(null);
    }
  }

  private Stream keepAlive(Lease lease) {
    Stream stream = new Stream();
    stream.requests = LockServiceGrpc.newStub(channel).keepAlive(stream);
    stream.requests.onNext(KeepAliveRequest.newBuilder().setResource(lease.getResource()).setToken(lease.getToken())
        .setTtl(TTL).setSequence(1).build());
    return stream;
  }

  @Test
  void newAcquiresAndStreamsAreRefusedWithAPushbackWhileRenewalsExtendsAndReleasesGoOn() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub blocking = LockServiceGrpc.newBlockingStub(channel);
    Lease kept = blocking.acquire(AcquireRequest.newBuilder().setResource("kept").setTtl(TTL).build()).getLease();
    Lease other = blocking.acquire(AcquireRequest.newBuilder().setResource("other").setTtl(TTL).build()).getLease();
    Lease returning = blocking.acquire(AcquireRequest.newBuilder().setResource("returning").setTtl(TTL).build())
        .getLease();
    Lease extra = blocking.acquire(AcquireRequest.newBuilder().setResource("extra").setTtl(TTL).build()).getLease();
    Stream open = keepAlive(kept);
    assertThat(open.answers.poll(5, TimeUnit.SECONDS).getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);

    lateness.set(Duration.ofMillis(400)); // far behind: past twice the bound

    StatusRuntimeException acquire = org.assertj.core.api.Assertions.catchThrowableOfType(
        () -> blocking.acquire(AcquireRequest.newBuilder().setResource("new").setTtl(TTL).build()),
        StatusRuntimeException.class);
    assertThat(acquire.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(Long.parseLong(acquire.getTrailers().get(Admission.PUSHBACK))).isPositive();
    assertThat(cluster.lockHolder(0, "redlock:{new}:lock")).as("a refusal changes nothing on the nodes").isNull();

    Stream refusedStream = keepAlive(returning);
    Throwable end = refusedStream.end.get(5, TimeUnit.SECONDS);
    assertThat(Status.fromThrowable(end).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(Long.parseLong(Status.trailersFromThrowable(end).get(Admission.PUSHBACK))).isPositive();
    assertThat(refusedStream.answers).isEmpty();
    assertThat(cluster.lockHolder(0, "redlock:{returning}:lock")).as("the refused stream's lease is as it was")
        .isEqualTo(returning.getToken());

    open.requests.onNext(KeepAliveRequest.newBuilder().setResource(kept.getResource()).setToken(kept.getToken())
        .setSequence(2).build());
    KeepAliveResponse renewed;
    do {
      renewed = open.answers.poll(5, TimeUnit.SECONDS);
    } while (renewed != null && renewed.getSequence() < 2);
    assertThat(renewed).as("an open stream's renewal is never refused").isNotNull();
    assertThat(renewed.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    assertThat(blocking.extend(ExtendRequest.newBuilder().setResource(other.getResource()).setToken(other.getToken())
        .setTtl(TTL).build()).getLease().getToken()).isEqualTo(other.getToken());
    assertThat(blocking.release(ReleaseRequest.newBuilder().setResource(other.getResource())
        .setToken(other.getToken()).build()).getReleased()).isTrue();
    assertThat(blocking.release(ReleaseRequest.newBuilder().setResource(returning.getResource())
        .setToken(returning.getToken()).build()).getReleased()).isTrue();

    open.requests.onCompleted();
    assertThat(open.end.get(5, TimeUnit.SECONDS)).as("half-closed: released, ended OK").isNull();
    assertThat(refused).containsExactly("Acquire", "KeepAlive");

    lateness.set(Duration.ofMillis(30)); // behind, but not twice the bound: new Acquires wait, streams do not
    assertThat(org.assertj.core.api.Assertions.catchThrowableOfType(
        () -> blocking.acquire(AcquireRequest.newBuilder().setResource("new").setTtl(TTL).build()),
        StatusRuntimeException.class).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    Stream admitted = keepAlive(extra);
    assertThat(admitted.answers.poll(5, TimeUnit.SECONDS).getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
    admitted.requests.onCompleted();
    assertThat(admitted.end.get(5, TimeUnit.SECONDS)).isNull();
  }
}
