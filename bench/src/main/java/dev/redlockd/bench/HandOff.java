package dev.redlockd.bench;

import com.google.protobuf.Duration;
import dev.redlockd.client.LockTokens;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * K clients queue for ONE resource through one redlockd server, or spread over several
 * servers on the same nodes: each Acquires with a wait, holds the lock about a millisecond,
 * Releases, and queues again. Hand-off time is from the moment the holder's Release is sent to
 * the moment the next grant (whoever gets it) arrives, both read from this JVM's clock; it
 * counts as across servers when the grant came through another server than the Release.
 * Mutual exclusion makes the pairing exact: no grant can arrive between a Release being sent
 * and the lock being free, so the next grant to arrive is the one that Release made possible.
 */
final class HandOff {
  private static final Duration WAIT = Duration.newBuilder().setSeconds(5).build();

  /** Client i talks to server {@code i % servers}, over that server's channels in turn. */
  private final List<List<LockServiceGrpc.LockServiceStub>> stubs;
  private final long holdMicros;
  private final String resource;
  private final ScheduledExecutorService holdTimer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "handoff-hold");
    t.setDaemon(true);
    return t;
  });
  private final AtomicLong releaseSentAt = new AtomicLong();
  private volatile int releasedThrough;
  private final Latencies handOffs = new Latencies();
  private final Latencies acrossServers = new Latencies();
  private final AtomicLong timedOut = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final CountDownLatch stopped;
  private volatile boolean recording;
  private volatile boolean running = true;

  /** Two servers: two clients, one on each (every hand-off crosses), and the usual clients spread over both. */
  record Across(Result pair, Result spread) {}

  /** {@code acrossServers}: the hand-offs whose grant came through another server than the Release. */
  record Result(int clients, int servers, double holdMs, double seconds, Latencies.Sorted handOffs,
      Latencies.Sorted acrossServers, long timedOut, long errors) {
    double perSecond() {
      return handOffs.count() / seconds;
    }
  }

  private HandOff(List<List<ManagedChannel>> servers, int clients, long holdMicros, String resource) {
    this.stubs = servers.stream().map(channels -> channels.stream().map(LockServiceGrpc::newStub).toList()).toList();
    this.holdMicros = holdMicros;
    this.resource = resource;
    this.stopped = new CountDownLatch(clients);
  }

  static Result run(List<List<ManagedChannel>> servers, int clients, long holdMicros, java.time.Duration warmUp,
      java.time.Duration measure) throws InterruptedException {
    HandOff h = new HandOff(servers, clients, holdMicros, "handoff:" + System.nanoTime());
    try {
      for (int i = 0; i < clients; i++) {
        List<LockServiceGrpc.LockServiceStub> server = h.stubs.get(i % h.stubs.size());
        h.acquire(server.get(i / h.stubs.size() % server.size()), i % h.stubs.size());
      }
      TimeUnit.NANOSECONDS.sleep(warmUp.toNanos());
      long start = System.nanoTime();
      h.recording = true;
      TimeUnit.NANOSECONDS.sleep(measure.toNanos());
      h.recording = false;
      double seconds = (System.nanoTime() - start) / 1e9;
      h.running = false;
      if (!h.stopped.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("hand-off clients still waiting 30 s after the measurement");
      }
      return new Result(clients, servers.size(), holdMicros / 1000.0, seconds, h.handOffs.sorted(),
          h.acrossServers.sorted(), h.timedOut.get(), h.errors.get());
    } finally {
      h.holdTimer.shutdownNow();
    }
  }

  private void acquire(LockServiceGrpc.LockServiceStub stub, int server) {
    if (!running) {
      stopped.countDown();
      return;
    }
    String token = LockTokens.newToken();
    AcquireRequest request = AcquireRequest.newBuilder().setResource(resource).setTtl(RedlockdGrpc.TTL)
        .setWait(WAIT).setToken(token).build();
    GrpcChannels.unary(stub.withDeadlineAfter(10, TimeUnit.SECONDS)::acquire, request).whenComplete((granted, error) -> {
      long now = System.nanoTime();
      if (error != null) {
        if (Status.fromThrowable(error).getCode() == Status.Code.ABORTED) {
          timedOut.incrementAndGet(); // waited the whole 5 s: queue again
        } else {
          errors.incrementAndGet();
        }
        acquire(stub, server);
        return;
      }
      long sent = releaseSentAt.getAndSet(0);
      if (sent != 0 && recording) {
        handOffs.add(now - sent);
        if (releasedThrough != server) {
          acrossServers.add(now - sent);
        }
      }
      holdTimer.schedule(() -> release(stub, server, token), holdMicros, TimeUnit.MICROSECONDS);
    });
  }

  private void release(LockServiceGrpc.LockServiceStub stub, int server, String token) {
    releasedThrough = server; // before the send time: the next grant reads them in the other order
    releaseSentAt.set(System.nanoTime());
    GrpcChannels.unary(stub.withDeadlineAfter(10, TimeUnit.SECONDS)::release,
        ReleaseRequest.newBuilder().setResource(resource).setToken(token).build())
        .whenComplete((released, error) -> {
          if (error != null || !released.getReleased()) {
            errors.incrementAndGet();
          }
          acquire(stub, server);
        });
  }
}
