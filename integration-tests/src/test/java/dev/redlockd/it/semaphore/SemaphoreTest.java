package dev.redlockd.it.semaphore;

import static dev.redlockd.it.support.LiveServer.codeOf;
import static dev.redlockd.it.support.LiveServer.fromProto;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.engine.NodeState;
import dev.redlockd.it.keepalive.StreamProbe;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.KeepAliveResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LeaseState;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.PermitHolder;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.ServerFlags;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Semaphores (issue 32) over two server replicas and 5 real redis-server processes: the bound
 * under contention, N agreed or refused, same-token retries, waiters woken across replicas,
 * Describe and ForceRelease, bad input, and KeepAlive resumed on the other replica.
 */
class SemaphoreTest {
  private static final AtomicInteger names = new AtomicInteger();
  private static LiveServer h;
  private static RedlockdServer replica;
  private static ManagedChannel replicaChannel;
  private static LockServiceGrpc.LockServiceBlockingStub other;

  @BeforeAll
  static void start() throws Exception {
    // A retry delay of 5 s: a waiter served sooner was woken by a release notice, not by polling.
    h = new LiveServer(5, "--allow-force-release", "--retry-delay", "5s", "--node-timeout", "250ms");
    replica = RedlockdServer.start(ServerConfig.parse(ServerFlags.forTest("--port", "0", "--redis",
        h.cluster.redisFlag(), "--allow-force-release", "--retry-delay", "5s", "--node-timeout", "250ms")));
    replicaChannel = channelTo(replica);
    other = LockServiceGrpc.newBlockingStub(replicaChannel);
  }

  @AfterAll
  static void stop() throws Exception {
    if (replicaChannel != null) {
      replicaChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (replica != null) {
      replica.close();
    }
    h.close();
  }

  private static ManagedChannel channelTo(RedlockdServer server) {
    return Grpc.newChannelBuilder("127.0.0.1:" + server.port(), InsecureChannelCredentials.create()).build();
  }

  private static String resource() {
    return "sem-" + names.incrementAndGet();
  }

  static AcquireRequest permitRequest(String resource, int permits, Duration ttl, Duration wait, String token) {
    return AcquireRequest.newBuilder()
        .setResource(resource)
        .setPermits(permits)
        .setTtl(proto(ttl))
        .setWait(proto(wait))
        .setToken(token)
        .build();
  }

  private static Lease permit(LockServiceGrpc.LockServiceBlockingStub stub, String resource, int permits) {
    return stub.acquire(permitRequest(resource, permits, Duration.ofSeconds(20), Duration.ZERO, "")).getLease();
  }

  private static boolean release(LockServiceGrpc.LockServiceBlockingStub stub, Lease lease) {
    return stub.release(ReleaseRequest.newBuilder().setResource(lease.getResource()).setToken(lease.getToken())
        .setPermit(lease.getPermit()).build()).getReleased();
  }

  private static DescribeResponse describe(String resource) {
    return h.blocking.describe(DescribeRequest.newBuilder().setResource(resource).build());
  }

  /** Every key of the semaphore on every node, with its value: what "nothing changed" compares. */
  private static List<Map<String, String>> semaphoreKeys(String resource) {
    List<Map<String, String>> all = new ArrayList<>();
    for (int i = 0; i < h.cluster.size(); i++) {
      Map<String, String> keys = new TreeMap<>();
      @SuppressWarnings("unchecked")
      List<Object> names = (List<Object>) h.cluster.call(i, "KEYS", "redlock:semaphore:{" + resource + "}:*");
      for (Object name : names) {
        keys.put((String) name, h.cluster.get(i, (String) name));
      }
      all.add(keys);
    }
    return all;
  }

  /** One critical section as its worker saw it: from the grant's arrival to the release's sending. */
  private record Section(int permit, long fence, long startNanos, long endNanos) {}

  @Test
  void nPlusThreeWorkersOverTwoReplicasNeverHoldMoreThanNPermitsAtOnce() throws Exception {
    String r = resource();
    int n = 3;
    int workers = n + 3;
    List<Section> sections = Collections.synchronizedList(new ArrayList<>());
    List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    List<ManagedChannel> channels = new ArrayList<>();
    try {
      List<Future<?>> running = new ArrayList<>();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
      for (int w = 0; w < workers; w++) {
        ManagedChannel channel = w % 2 == 0 ? channelTo(h.server) : channelTo(replica);
        channels.add(channel);
        LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channel);
        running.add(pool.submit(() -> {
          while (System.nanoTime() < until) {
            try {
              long sent = System.nanoTime();
              Lease lease = stub.acquire(permitRequest(r, n, Duration.ofSeconds(2), Duration.ofSeconds(3), ""))
                  .getLease();
              long start = System.nanoTime();
              // The holder may rely on it until sent + validity; it stops before that or at it.
              long validUntil = sent + fromProto(lease.getValidity()).toNanos();
              Thread.sleep(ThreadLocalRandom.current().nextInt(20, 60));
              long end = Math.min(System.nanoTime(), validUntil);
              sections.add(new Section(lease.getPermit(), lease.getFencingToken(), start, end));
              release(stub, lease);
            } catch (io.grpc.StatusRuntimeException e) {
              if (e.getStatus().getCode() != Status.Code.ABORTED) {
                errors.add(e);
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
          }
        }));
      }
      for (Future<?> f : running) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      channels.forEach(ManagedChannel::shutdownNow);
    }
    assertThat(errors).isEmpty();
    assertThat(sections.size()).as("acquisitions").isGreaterThan(n + 1);
    assertThat(maxOverlap(sections)).as("most sections at one instant").isLessThanOrEqualTo(n);
    Set<Integer> seen = new TreeSet<>();
    Map<Integer, Long> lastFence = new TreeMap<>();
    List<Section> byStart = new ArrayList<>(sections);
    byStart.sort((a, b) -> Long.compare(a.startNanos(), b.startNanos()));
    for (Section s : byStart) {
      assertThat(s.permit()).isBetween(1, n);
      seen.add(s.permit());
      Long before = lastFence.put(s.permit(), s.fence());
      if (before != null) {
        assertThat(s.fence()).as("fencing tokens rise per permit").isGreaterThan(before);
      }
    }
    assertThat(seen).as("every permit was used").containsExactly(1, 2, 3);
    System.out.println("semaphore: " + sections.size() + " acquisitions by " + workers + " workers on N=" + n
        + ", at most " + maxOverlap(sections) + " at once");
  }

  private static int maxOverlap(List<Section> sections) {
    List<long[]> events = new ArrayList<>();
    for (Section s : sections) {
      events.add(new long[] {s.startNanos(), 1});
      events.add(new long[] {s.endNanos(), -1});
    }
    // At one instant, an end counts before a start: the next holder starts after the last ends.
    events.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    int now = 0;
    int max = 0;
    for (long[] e : events) {
      now += (int) e[1];
      max = Math.max(max, now);
    }
    return max;
  }

  @Test
  void anotherNIsFailedPreconditionAndChangesNothing() {
    String r = resource();
    Lease held = permit(h.blocking, r, 3);
    List<Map<String, String>> before = semaphoreKeys(r);
    Status status = codeOf(() -> other.acquire(permitRequest(r, 4, Duration.ofSeconds(5), Duration.ofSeconds(1),
        "")));
    assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(status.getDescription()).contains("'" + r + "'", "has 3 permits", "asked for 4")
        .doesNotContain(held.getToken());
    assertThat(semaphoreKeys(r)).as("no key written, none changed").isEqualTo(before);
    DescribeResponse d = describe(r);
    assertThat(d.getPermits()).isEqualTo(3);
    assertThat(d.getHoldersList()).extracting(PermitHolder::getPermit).containsExactly(held.getPermit());
  }

  @Test
  void aRetryWithTheSameTokenGetsTheSamePermitBackAndNeverASecond() {
    String r = resource();
    String token = "sameTokenRetry" + "A".repeat(20);
    Lease first = h.blocking.acquire(permitRequest(r, 4, Duration.ofSeconds(20), Duration.ZERO, token)).getLease();
    for (int i = 0; i < 6; i++) {
      LockServiceGrpc.LockServiceBlockingStub stub = i % 2 == 0 ? other : h.blocking;
      Lease again = stub.acquire(permitRequest(r, 4, Duration.ofSeconds(20), Duration.ZERO, token)).getLease();
      assertThat(again.getPermit()).isEqualTo(first.getPermit());
      assertThat(again.getFencingToken()).isEqualTo(first.getFencingToken());
    }
    DescribeResponse d = describe(r);
    assertThat(d.getFreePermits()).isEqualTo(3);
    assertThat(d.getHoldersList()).hasSize(1);
    // Exactly one permit key on each node.
    for (Map<String, String> node : semaphoreKeys(r)) {
      assertThat(node.keySet().stream().filter(k -> k.contains(":permit:"))).hasSize(1);
    }
  }

  @Test
  void aWaiterOnOneReplicaIsWokenByTheReleaseOfAnyPermitThroughTheOther() throws Exception {
    String r = resource();
    Lease a = permit(h.blocking, r, 2);
    Lease b = permit(h.blocking, r, 2);
    assertThat(Set.of(a.getPermit(), b.getPermit())).containsExactlyInAnyOrder(1, 2);
    Future<Lease> waiter = Executors.newSingleThreadExecutor().submit(() ->
        other.acquire(permitRequest(r, 2, Duration.ofSeconds(20), Duration.ofSeconds(10), "")).getLease());
    Thread.sleep(600); // the waiter's first round was refused: it now waits (retry delay 5 s)
    assertThat(waiter.isDone()).isFalse();
    long released = System.nanoTime();
    assertThat(release(h.blocking, b)).isTrue();
    Lease woken = waiter.get(10, TimeUnit.SECONDS);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released);
    System.out.println("semaphore: waiter on the other replica served " + tookMs + "ms after the release");
    assertThat(tookMs).as("woken by the release notice, not by its 5 s retry").isLessThan(1500);
    assertThat(woken.getPermit()).isEqualTo(b.getPermit());
    assertThat(woken.getFencingToken()).isGreaterThan(b.getFencingToken());
  }

  /** A lock and a semaphore on one name are separate, and Describe shows both: neither hides the other. */
  @Test
  void describeShowsTheLockAndTheSemaphoreOnOneNameAtOnce() {
    String r = resource();
    Lease permit = h.blocking.acquire(permitRequest(r, 2, Duration.ofSeconds(20), Duration.ZERO, "").toBuilder()
        .setOwner("permit-holder").build()).getLease();
    Lease lock = h.blocking.acquire(AcquireRequest.newBuilder().setResource(r).setOwner("lock-holder")
        .setTtl(proto(Duration.ofSeconds(20))).build()).getLease();
    DescribeResponse both = describe(r);
    assertThat(both.getHeld()).as("the lock, while a permit is held").isTrue();
    assertThat(both.getOwner()).isEqualTo("lock-holder");
    assertThat(both.getFencingToken()).isEqualTo(lock.getFencingToken());
    assertThat(both.getPermits()).isEqualTo(2);
    assertThat(both.getFreePermits()).isEqualTo(1);
    assertThat(both.getHoldersList()).extracting(PermitHolder::getOwner).containsExactly("permit-holder");
    assertThat(both.toString()).doesNotContain(permit.getToken(), lock.getToken());

    assertThat(release(h.blocking, permit)).isTrue();
    DescribeResponse lockOnly = describe(r);
    assertThat(lockOnly.getHeld()).isTrue();
    assertThat(lockOnly.getPermits()).as("no permit held: no semaphore described").isZero();
    assertThat(lockOnly.getHoldersList()).isEmpty();
    assertThat(h.blocking.release(ReleaseRequest.newBuilder().setResource(r).setToken(lock.getToken()).build())
        .getReleased()).isTrue();
    assertThat(describe(r)).isEqualTo(DescribeResponse.getDefaultInstance());
  }

  @Test
  void describeReportsPermitsAndHoldersAndForceReleaseDeletesOnePermit() throws Exception {
    String r = resource();
    Lease a = h.blocking.acquire(permitRequest(r, 3, Duration.ofSeconds(20), Duration.ZERO, "").toBuilder()
        .setOwner("worker-a").build()).getLease();
    DescribeResponse d = describe(r);
    assertThat(d.getHeld()).isFalse();
    assertThat(d.getPermits()).isEqualTo(3);
    assertThat(d.getFreePermits()).isEqualTo(2);
    PermitHolder holder = d.getHolders(0);
    assertThat(holder.getPermit()).isEqualTo(a.getPermit());
    assertThat(holder.getOwner()).isEqualTo("worker-a");
    assertThat(holder.getFencingToken()).isEqualTo(a.getFencingToken());
    assertThat(holder.getNodesCount()).isGreaterThanOrEqualTo(3);
    assertThat(fromProto(holder.getRemainingTtl())).isBetween(Duration.ofSeconds(15), Duration.ofSeconds(20));
    // A lock on the same name is another thing: describing it after the permits are gone.
    assertThat(d.toString()).doesNotContain(a.getToken());

    assertThat(other.forceRelease(ForceReleaseRequest.newBuilder().setResource(r).setPermit(a.getPermit()).build())
        .getReleased()).isTrue();
    DescribeResponse after = describe(r);
    assertThat(after.getHoldersList()).isEmpty();
    assertThat(other.forceRelease(ForceReleaseRequest.newBuilder().setResource(r).setPermit(a.getPermit()).build())
        .getReleased()).isFalse();
    Status gone = codeOf(() -> h.blocking.extend(ExtendRequest.newBuilder().setResource(r).setToken(a.getToken())
        .setPermit(a.getPermit()).setTtl(proto(Duration.ofSeconds(5))).build()));
    assertThat(gone.getCode()).isEqualTo(Status.Code.NOT_FOUND);
  }

  @Test
  void permitsAndLocksOnOneNameAreSeparate() {
    String r = resource();
    Lease lock = h.acquire(r, Duration.ofSeconds(20));
    Lease permit = permit(h.blocking, r, 1);
    assertThat(permit.getPermit()).isEqualTo(1);
    assertThat(lock.getPermit()).isZero();
    // The lock's token does not name the permit, nor the other way round.
    assertThat(codeOf(() -> h.blocking.extend(ExtendRequest.newBuilder().setResource(r).setToken(lock.getToken())
        .setPermit(1).setTtl(proto(Duration.ofSeconds(5))).build())).getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(h.blocking.extend(ExtendRequest.newBuilder().setResource(r).setToken(permit.getToken())
        .setPermit(1).setTtl(proto(Duration.ofSeconds(5))).build()).getLease().getPermit()).isEqualTo(1);
  }

  @Test
  void badPermitNumbersAreInvalidArgumentAndChangeNothing() throws Exception {
    String r = resource();
    Lease held = permit(h.blocking, r, 2);
    List<Map<String, String>> before = semaphoreKeys(r);
    List<Status> refused = List.of(
        codeOf(() -> h.blocking.acquire(permitRequest(r, 1025, Duration.ofSeconds(5), Duration.ZERO, ""))),
        codeOf(() -> h.blocking.acquire(permitRequest(r, -1, Duration.ofSeconds(5), Duration.ZERO, ""))),
        codeOf(() -> h.blocking.extend(ExtendRequest.newBuilder().setResource(r).setToken(held.getToken())
            .setPermit(1025).setTtl(proto(Duration.ofSeconds(5))).build())),
        codeOf(() -> h.blocking.release(ReleaseRequest.newBuilder().setResource(r).setToken(held.getToken())
            .setPermit(1025).build())),
        codeOf(() -> h.blocking.forceRelease(ForceReleaseRequest.newBuilder().setResource(r).setPermit(1025)
            .build())));
    for (Status s : refused) {
      assertThat(s.getCode()).as(s.toString()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).contains("'" + r + "'", "1024").doesNotContain(held.getToken());
    }
    StreamProbe probe = StreamProbe.open(h.async);
    probe.send(KeepAliveRequest.newBuilder().setResource(r).setToken(held.getToken()).setPermit(1025)
        .setTtl(proto(Duration.ofSeconds(5))).build());
    assertThat(probe.awaitEnd(Duration.ofSeconds(3)).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(semaphoreKeys(r)).isEqualTo(before);
  }

  @Test
  void aKeptPermitResumesOnTheOtherReplicaWithItsFencingToken() throws Exception {
    try (LiveServer own = new LiveServer(3, "--node-timeout", "250ms");
        RedlockdServer second = RedlockdServer.start(ServerConfig.parse(
            ServerFlags.forTest("--port", "0", "--redis", own.cluster.redisFlag(), "--node-timeout", "250ms")))) {
      String r = resource();
      Lease lease = own.blocking.acquire(permitRequest(r, 2, Duration.ofSeconds(30), Duration.ZERO, "")).getLease();
      KeepAliveRequest keep = KeepAliveRequest.newBuilder().setResource(r).setToken(lease.getToken())
          .setPermit(lease.getPermit()).setTtl(proto(Duration.ofSeconds(30))).build();
      StreamProbe probe = StreamProbe.open(own.async);
      probe.send(keep);
      assertThat(probe.next(Duration.ofSeconds(2)).getLease().getPermit()).isEqualTo(lease.getPermit());
      own.server.close();
      assertThat(probe.awaitEnd(Duration.ofSeconds(5)).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      ManagedChannel channel = channelTo(second);
      try {
        StreamProbe resumed = StreamProbe.open(LockServiceGrpc.newStub(channel));
        resumed.send(keep.toBuilder().setSequence(7).build());
        KeepAliveResponse renewed = resumed.next(Duration.ofSeconds(2));
        assertThat(renewed.getState()).isEqualTo(LeaseState.LEASE_STATE_HELD);
        assertThat(renewed.getSequence()).isEqualTo(7);
        assertThat(renewed.getLease().getPermit()).isEqualTo(lease.getPermit());
        assertThat(renewed.getLease().getFencingToken()).isEqualTo(lease.getFencingToken());
        // The stream keeps that permit: a request naming another ends it.
        resumed.send(keep.toBuilder().setPermit(lease.getPermit() == 1 ? 2 : 1).build());
        assertThat(resumed.awaitEnd(Duration.ofSeconds(3)).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        // A stream naming the wrong permit for the token finds nothing held.
        StreamProbe wrong = StreamProbe.open(LockServiceGrpc.newStub(channel));
        wrong.send(keep.toBuilder().setPermit(lease.getPermit() == 1 ? 2 : 1).build());
        assertThat(wrong.awaitEnd(Duration.ofSeconds(3)).getCode()).isEqualTo(Status.Code.NOT_FOUND);
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  void aMajorityRestartedEmptyDoesNotLetAThirdHolderInWhileTwoHold() throws Exception {
    try (LiveServer own = new LiveServer(5, "--max-ttl", "3s", "--node-timeout", "250ms")) {
      String r = resource();
      Lease a = own.blocking.acquire(permitRequest(r, 2, Duration.ofSeconds(3), Duration.ZERO, "")).getLease();
      Lease b = own.blocking.acquire(permitRequest(r, 2, Duration.ofSeconds(3), Duration.ZERO, "")).getLease();
      long granted = System.nanoTime();
      own.cluster.restart(0, 1, 2);
      // Each permit's key is quarantined as a lock's is: the empty nodes do not vote for any.
      Status third = codeOf(() -> own.blocking.acquire(permitRequest(r, 2, Duration.ofSeconds(3),
          Duration.ofMillis(500), "")));
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - granted))
          .as("the check ran while both permits were valid").isLessThan(2500);
      assertThat(third.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(third.getDescription()).contains("quarantined");
      // Nor does a caller with another N get in through the empty nodes.
      Status otherN = codeOf(() -> own.blocking.acquire(permitRequest(r, 5, Duration.ofSeconds(3),
          Duration.ZERO, "")));
      assertThat(otherN.getCode()).isNotEqualTo(Status.Code.OK);
      await().atMost(Duration.ofSeconds(15)).until(() -> own.server.engine().nodeStates().values().stream()
          .allMatch(s -> s == NodeState.UP));
      Lease next = own.blocking.acquire(permitRequest(r, 2, Duration.ofSeconds(3), Duration.ofSeconds(5), ""))
          .getLease();
      long before = next.getPermit() == a.getPermit() ? a.getFencingToken() : b.getFencingToken();
      assertThat(next.getFencingToken()).as("fences keep rising per permit").isGreaterThan(before);
    }
  }
}
