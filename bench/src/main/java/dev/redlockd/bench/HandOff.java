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
  /** The client whose Release the next grant follows: a grant back to it is not one to a waiter. */
  private volatile int releasedBy;
  /** The send time of the last Release whose reply came: equal to the pending one's once it replied. */
  private volatile long repliedRelease;
  private volatile long repliedAt;
  private final Latencies releaseReplies = new Latencies();
  private final Latencies grantAfterReply = new Latencies();
  private final AtomicLong grantsBeforeReply = new AtomicLong();
  private final AtomicLong grantsToReleaser = new AtomicLong();
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
      Latencies.Sorted acrossServers, long timedOut, long errors, Phases phases) {
    double perSecond() {
      return handOffs.count() / seconds;
    }
  }

  /**
   * Where a hand-off's time goes, as the bench can see it: the Release's own reply (gRPC both
   * ways and the release round), how many grants came before that reply (the waiter was woken
   * and its round done before the releaser heard back) and how long the others came after it,
   * how many went back to the client that released (its new Acquire beat the waiters), and the
   * nodes' work per hand-off (see {@link NodeWork}) against a hand-off's least: one release
   * round and one acquire round.
   */
  record Phases(Latencies.Sorted releaseReplies, Latencies.Sorted grantAfterReply, long grantsBeforeReply,
      long grantsToReleaser, NodeWork.Delta nodeWork) {}

  private HandOff(List<List<ManagedChannel>> servers, int clients, long holdMicros, String resource) {
    this.stubs = servers.stream().map(channels -> channels.stream().map(LockServiceGrpc::newStub).toList()).toList();
    this.holdMicros = holdMicros;
    this.resource = resource;
    this.stopped = new CountDownLatch(clients);
  }

  static Result run(List<List<ManagedChannel>> servers, int clients, long holdMicros, java.time.Duration warmUp,
      java.time.Duration measure, NodeWork nodeWork) throws InterruptedException {
    HandOff h = new HandOff(servers, clients, holdMicros, "handoff:" + System.nanoTime());
    try {
      for (int i = 0; i < clients; i++) {
        List<LockServiceGrpc.LockServiceStub> server = h.stubs.get(i % h.stubs.size());
        h.acquire(server.get(i / h.stubs.size() % server.size()), i % h.stubs.size(), i);
      }
      TimeUnit.NANOSECONDS.sleep(warmUp.toNanos());
      NodeWork.Counts workBefore = nodeWork.read();
      long start = System.nanoTime();
      h.recording = true;
      TimeUnit.NANOSECONDS.sleep(measure.toNanos());
      h.recording = false;
      double seconds = (System.nanoTime() - start) / 1e9;
      NodeWork.Delta work = nodeWork.read().since(workBefore);
      h.running = false;
      if (!h.stopped.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("hand-off clients still waiting 30 s after the measurement");
      }
      return new Result(clients, servers.size(), holdMicros / 1000.0, seconds, h.handOffs.sorted(),
          h.acrossServers.sorted(), h.timedOut.get(), h.errors.get(), new Phases(h.releaseReplies.sorted(),
          h.grantAfterReply.sorted(), h.grantsBeforeReply.get(), h.grantsToReleaser.get(), work));
    } finally {
      h.holdTimer.shutdownNow();
    }
  }

  private void acquire(LockServiceGrpc.LockServiceStub stub, int server, int client) {
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
        acquire(stub, server, client);
        return;
      }
      long sent = releaseSentAt.getAndSet(0);
      if (sent != 0 && recording) {
        handOffs.add(now - sent);
        if (releasedThrough != server) {
          acrossServers.add(now - sent);
        }
        if (releasedBy == client) {
          grantsToReleaser.incrementAndGet();
        }
        if (repliedRelease == sent) {
          grantAfterReply.add(now - repliedAt);
        } else {
          grantsBeforeReply.incrementAndGet();
        }
      }
      holdTimer.schedule(() -> release(stub, server, client, token), holdMicros, TimeUnit.MICROSECONDS);
    });
  }

  private void release(LockServiceGrpc.LockServiceStub stub, int server, int client, String token) {
    releasedThrough = server; // before the send time: the next grant reads them in the other order
    releasedBy = client;
    long sent = System.nanoTime();
    releaseSentAt.set(sent);
    GrpcChannels.unary(stub.withDeadlineAfter(10, TimeUnit.SECONDS)::release,
        ReleaseRequest.newBuilder().setResource(resource).setToken(token).build())
        .whenComplete((released, error) -> {
          long now = System.nanoTime();
          if (recording) {
            releaseReplies.add(now - sent);
          }
          repliedAt = now; // before repliedRelease: a grant that reads the one reads this one's time
          repliedRelease = sent;
          if (error != null || !released.getReleased()) {
            errors.incrementAndGet();
          }
          acquire(stub, server, client);
        });
  }
}
