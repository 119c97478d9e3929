package dev.redlockd.it.scale;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.ExclusionChecker;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Seven real Redis nodes, each resource on five of them (--nodes-per-resource 5), through the
 * real server over real sockets: contending clients never overlap and their fences rise while
 * one node is SIGSTOPped mid-run, and each resource's keys sit on at most five nodes (its set),
 * the resources spread over all seven.
 */
class ReplicaSetExclusionTest {
  private static final int NODES = 7;
  private static final int PER_RESOURCE = 5;
  private static final int CLIENTS = 12;
  private static final int GRANTS_PER_CLIENT = 10;
  private static final String[] RESOURCES = {"rs-a", "rs-b", "rs-c", "rs-d", "rs-e", "rs-f"};
  private static final Duration TTL = Duration.ofSeconds(2);
  private static final AtomicInteger UNAVAILABLE = new AtomicInteger();

  /** Acquires with a wait, again after UNAVAILABLE (a round that missed its quorum on a loaded machine). */
  private static Lease acquire(LockServiceGrpc.LockServiceBlockingStub stub, String resource) {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (true) {
      try {
        return stub.acquire(acquireRequest(resource, TTL, Duration.ofSeconds(30), "")).getLease();
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) {
          throw e;
        }
        UNAVAILABLE.incrementAndGet();
      }
    }
  }

  /** Releases after the section; UNAVAILABLE leaves the lease to run out at its ttl. */
  private static void release(LockServiceGrpc.LockServiceBlockingStub stub, String resource, Lease lease) {
    try {
      stub.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build());
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
        throw e;
      }
    }
  }

  @Test
  void contendingClientsNeverOverlapWhileANodeIsFrozenAndEachResourceStaysOnItsSet() throws Exception {
    try (LiveServer h = new LiveServer(NODES, "--nodes-per-resource", Integer.toString(PER_RESOURCE))) {
      ExclusionChecker checker = new ExclusionChecker();
      AtomicInteger renewalsRefused = new AtomicInteger();
      List<ManagedChannel> channels = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        channels.add(h.newChannel());
      }
      ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
      int freezeAfter = CLIENTS * GRANTS_PER_CLIENT / 4;
      AtomicBoolean frozen = new AtomicBoolean();
      try {
        List<Future<Integer>> results = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
          String me = "client-" + c;
          LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channels.get(c % 4));
          results.add(clients.submit(() -> {
            int granted = 0;
            for (int i = 0; i < GRANTS_PER_CLIENT; i++) {
              String r = RESOURCES[ThreadLocalRandom.current().nextInt(RESOURCES.length)];
              Lease lease = acquire(stub, r);
              checker.enter(r, me, lease.getFencingToken());
              if (checker.sections.get() >= freezeAfter && frozen.compareAndSet(false, true)) {
                h.cluster().pause(2); // SIGSTOP: holds its sockets, answers nothing
              }
              try {
                stub.extend(ExtendRequest.newBuilder().setResource(r).setToken(lease.getToken())
                    .setTtl(proto(TTL)).build());
                Thread.sleep(1 + ThreadLocalRandom.current().nextInt(3));
              } catch (StatusRuntimeException e) {
                renewalsRefused.incrementAndGet(); // the holder stops relying on the lease at once
              }
              checker.exit(r, me);
              release(stub, r, lease);
              granted++;
            }
            return granted;
          }));
        }
        for (Future<Integer> f : results) {
          assertThat(f.get(3, TimeUnit.MINUTES)).isEqualTo(GRANTS_PER_CLIENT);
        }
      } finally {
        h.cluster().resumeAll();
        clients.shutdownNow();
        channels.forEach(ManagedChannel::shutdownNow);
      }
      // Each resource's fence counter lives a ttl past its last take, on the nodes that took it.
      Map<String, Set<Integer>> holders = new TreeMap<>();
      Set<Integer> used = new HashSet<>();
      for (String r : RESOURCES) {
        Set<Integer> on = new HashSet<>();
        for (int node = 0; node < NODES; node++) {
          Object keys = h.cluster().call(node, "KEYS", "*{" + r + "}*");
          if (keys instanceof List<?> list && !list.isEmpty()) {
            on.add(node);
          }
        }
        holders.put(r, on);
        used.addAll(on);
      }
      System.out.printf("replica sets (%d of %d): %d sections, %d renewals refused, %d acquires again after "
          + "UNAVAILABLE; nodes holding each resource's keys: %s%n", PER_RESOURCE, NODES, checker.sections.get(),
          renewalsRefused.get(), UNAVAILABLE.get(), holders);
      assertThat(frozen).isTrue();
      assertThat(checker.sections.get()).isEqualTo(CLIENTS * GRANTS_PER_CLIENT);
      assertThat(checker.overlaps.get()).isZero();
      assertThat(checker.fenceViolations.get()).isZero();
      for (Map.Entry<String, Set<Integer>> e : holders.entrySet()) {
        // A majority of the set took each grant; nothing went outside the set.
        assertThat(e.getValue()).as(e.getKey()).hasSizeBetween(PER_RESOURCE / 2 + 1, PER_RESOURCE);
      }
      assertThat(used).as("the resources spread over the nodes").hasSizeGreaterThan(PER_RESOURCE);
    }
  }
}
