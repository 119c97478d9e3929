package dev.redlockd.it.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Admission control against real Redis: a quorum of nodes answers late (as nodes short of CPU
 * do in a restart storm), so every round waits past the admission bound. A burst of new
 * Acquire calls then gets UNAVAILABLE at once with a {@code grpc-retry-pushback-ms} trailer,
 * instead of each waiting on the late nodes, while the KeepAlive streams already open go on
 * being renewed and end OK.
 *
 * <p>Timing-tolerant on a loaded machine: the nodes' answers are 400 ms late against a node
 * timeout of 2 s (so no renewal fails for want of time) and an admission bound of 100 ms.
 */
class AdmissionControlTest {
  private static final Metadata.Key<String> PUSHBACK =
      Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);
  private static final Duration DELAY = Duration.ofMillis(400);
  private static final com.google.protobuf.Duration TTL = com.google.protobuf.Duration.newBuilder().setSeconds(6).build();

  /** One KeepAlive stream: its HELD answers, and how it ended. */
  private static final class Stream implements StreamObserver<KeepAliveResponse> {
    final AtomicLong held = new AtomicLong();
    final CompletableFuture<Status> end = new CompletableFuture<>();
    StreamObserver<KeepAliveRequest> requests;

    @Override
    public void onNext(KeepAliveResponse response) {
      if (response.getState() == LeaseState.LEASE_STATE_HELD) {
        held.incrementAndGet();
      }
    }

    @Override
    public void onError(Throwable t) {
      end.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      end.complete(Status.OK);
    }
  }

  /** How one Acquire of the burst ended, and how long it took. */
  private record Outcome(Status status, String pushback, long nanos) {}

  @Test
  void aBurstPastWhatTheNodesCanTakeIsRefusedEarlyWithAPushbackAndNoOpenStreamLosesItsLease() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(5)) {
      List<DelayProxy> proxies = new ArrayList<>();
      List<String> redis = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        if (i < 3) {
          DelayProxy proxy = new DelayProxy(cluster.node(i).port());
          proxies.add(proxy);
          redis.add("redis://127.0.0.1:" + proxy.port());
        } else {
          redis.add(cluster.uris().get(i));
        }
      }
      RedlockdServer server = RedlockdServer.start(ServerConfig.parse(new String[] {"--port", "0",
          "--redis", String.join(",", redis), "--node-timeout", "2s", "--admission-latency", "100ms"}));
      ManagedChannel channel = Grpc.newChannelBuilder("127.0.0.1:" + server.port(),
          InsecureChannelCredentials.create()).build();
      try {
        LockServiceGrpc.LockServiceBlockingStub blocking = LockServiceGrpc.newBlockingStub(channel);
        LockServiceGrpc.LockServiceStub async = LockServiceGrpc.newStub(channel);
        List<Stream> streams = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          Lease lease = blocking.acquire(AcquireRequest.newBuilder().setResource("kept-" + i).setTtl(TTL).build())
              .getLease();
          Stream stream = new Stream();
          stream.requests = async.keepAlive(stream);
          stream.requests.onNext(KeepAliveRequest.newBuilder().setResource(lease.getResource())
              .setToken(lease.getToken()).setTtl(TTL).build());
          streams.add(stream);
        }

        for (DelayProxy proxy : proxies) {
          proxy.delayAnswers(DELAY);
        }
        List<CompletableFuture<Outcome>> burst = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
          burst.add(acquire(async, "burst-" + i));
          Thread.sleep(5);
        }
        CompletableFuture.allOf(burst.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        List<Outcome> refused = new ArrayList<>();
        List<Outcome> other = new ArrayList<>();
        int granted = 0;
        for (CompletableFuture<Outcome> f : burst) {
          Outcome o = f.join();
          if (o.status().isOk()) {
            granted++;
          } else if (o.status().getCode() == Status.Code.UNAVAILABLE && o.pushback() != null) {
            refused.add(o);
          } else {
            other.add(o);
          }
        }
        System.out.printf("burst of %d Acquire calls: %d granted, %d refused early, %d otherwise%n", burst.size(),
            granted, refused.size(), other.size());
        assertThat(refused).as("Acquire calls refused early with a pushback (granted %d)", granted).isNotEmpty();
        assertThat(other).as("every Acquire is granted or refused with a pushback: none times out").isEmpty();
        for (Outcome o : refused) {
          assertThat(Long.parseLong(o.pushback())).isPositive();
          assertThat(o.status().getDescription()).contains("overloaded");
        }
        long[] refusedMs = refused.stream().mapToLong(o -> TimeUnit.NANOSECONDS.toMillis(o.nanos())).sorted().toArray();
        assertThat(refusedMs[refusedMs.length / 2]).as("a refusal is answered at once, not after the late nodes")
            .isLessThan(DELAY.toMillis());

        for (DelayProxy proxy : proxies) {
          proxy.delayAnswers(Duration.ZERO);
        }
        Thread.sleep(500);
        for (Stream stream : streams) {
          assertThat(stream.end).as("a stream open before the burst is still open").isNotDone();
          assertThat(stream.held.get()).isPositive();
          stream.requests.onCompleted();
        }
        for (Stream stream : streams) {
          assertThat(stream.end.get(10, TimeUnit.SECONDS).getCode()).as("half-closed: released, ended OK")
              .isEqualTo(Status.Code.OK);
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
        for (DelayProxy proxy : proxies) {
          proxy.close();
        }
      }
    }
  }

  private static CompletableFuture<Outcome> acquire(LockServiceGrpc.LockServiceStub async, String resource) {
    CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    long start = System.nanoTime();
    async.acquire(AcquireRequest.newBuilder().setResource(resource).setTtl(TTL).build(), new StreamObserver<>() {
      @Override
      public void onNext(AcquireResponse value) {}

      @Override
      public void onError(Throwable t) {
        Metadata trailers = Status.trailersFromThrowable(t);
        outcome.complete(new Outcome(Status.fromThrowable(t), trailers == null ? null : trailers.get(PUSHBACK),
            System.nanoTime() - start));
      }

      @Override
      public void onCompleted() {
        outcome.complete(new Outcome(Status.OK, null, System.nanoTime() - start));
      }
    });
    return outcome;
  }
}
