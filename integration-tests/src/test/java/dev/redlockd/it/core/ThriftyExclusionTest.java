package dev.redlockd.it.core;

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
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Thrifty rounds (a quorum of nodes per round) through the real server over real sockets and
 * five real Redis nodes: contending clients never overlap and their fences rise, while one node
 * is SIGSTOPped mid-run (grants and renewals that asked it widen to the next nodes; a renewal
 * whose lease it held puts the lease back on a free node).
 */
class ThriftyExclusionTest {
  private static final int CLIENTS = 16;
  private static final int GRANTS_PER_CLIENT = 10;
  private static final String[] RESOURCES = {"th-a", "th-b", "th-c"};
  private static final Duration TTL = Duration.ofSeconds(2);

  /**
   * Acquires with a wait, again after UNAVAILABLE (a round that missed the quorum, which a
   * node timeout on a loaded machine can cause; the server took back what it wrote), as the
   * clients do, for up to a minute.
   */
  private static Lease acquire(LockServiceGrpc.LockServiceBlockingStub stub, String resource) {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (true) {
      try {
        return stub.acquire(acquireRequest(resource, TTL, Duration.ofSeconds(30), "")).getLease();
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != io.grpc.Status.Code.UNAVAILABLE || System.nanoTime() > deadline) {
          throw e;
        }
        UNAVAILABLE.incrementAndGet();
      }
    }
  }

  private static final AtomicInteger UNAVAILABLE = new AtomicInteger();
  private static final AtomicInteger RELEASES_UNKNOWN = new AtomicInteger();

  /**
   * Releases after the section. UNAVAILABLE is an answer here: a lease written on exactly a
   * quorum that includes the frozen node cannot be confirmed released by a quorum, and runs out
   * at its ttl there (the next holder's grant then skips that node).
   */
  private static void release(LockServiceGrpc.LockServiceBlockingStub stub, String resource, Lease lease) {
    try {
      stub.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build());
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != io.grpc.Status.Code.UNAVAILABLE) {
        throw e;
      }
      RELEASES_UNKNOWN.incrementAndGet();
    }
  }

  @Test
  void contendingClientsNeverOverlapAndFencesRiseWhileANodeIsFrozen() throws Exception {
    try (LiveServer h = new LiveServer(5, "--thrifty-rounds")) {
      ExclusionChecker checker = new ExclusionChecker();
      AtomicInteger renewed = new AtomicInteger();
      AtomicInteger renewedWhileFrozen = new AtomicInteger();
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
                    .setTtl(proto(TTL)).build()).getLease();
                renewed.incrementAndGet();
                if (frozen.get()) {
                  renewedWhileFrozen.incrementAndGet();
                }
              } catch (StatusRuntimeException e) {
                // A renewal may miss the quorum (a node timeout on a loaded machine); the
                // holder then stops relying on the lease at once, as a client must.
                renewalsRefused.incrementAndGet();
                checker.exit(r, me);
                release(stub, r, lease);
                granted++;
                continue;
              }
              Thread.sleep(1 + ThreadLocalRandom.current().nextInt(3));
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
      System.out.printf("thrifty: %d sections, %d renewed (%d with node 2 frozen), %d renewals refused, "
          + "%d acquires again after UNAVAILABLE, %d releases UNAVAILABLE%n", checker.sections.get(), renewed.get(),
          renewedWhileFrozen.get(), renewalsRefused.get(), UNAVAILABLE.get(), RELEASES_UNKNOWN.get());
      assertThat(frozen).isTrue();
      assertThat(checker.sections.get()).isEqualTo(CLIENTS * GRANTS_PER_CLIENT);
      assertThat(checker.overlaps.get()).isZero();
      assertThat(checker.fenceViolations.get()).isZero();
      assertThat(renewedWhileFrozen.get()).as("renewals with node 2 frozen").isPositive();
    }
  }
}
