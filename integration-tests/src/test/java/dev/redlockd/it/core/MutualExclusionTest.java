package dev.redlockd.it.core;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.ExclusionChecker;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Many clients contend through the real server over real sockets; no two ever hold a resource at once. */
class MutualExclusionTest {
  private static final int CLIENTS = 32;
  private static final int GRANTS_PER_CLIENT = 15;
  private static final String[] RESOURCES = {"mx-a", "mx-b", "mx-c"};

  @Test
  void thirtyTwoClientsOnThreeResourcesNeverOverlapAndFencesRiseInGrantOrder() throws Exception {
    // The claim is exclusion and fence order, not the 50 ms default node timeout: at load 15 a
    // stalled server missed it on every node ("0 of 5 Redis nodes answered") and failed the run.
    try (LiveServer h = new LiveServer(5, "--node-timeout", "500ms")) {
      ExclusionChecker checker = new ExclusionChecker();
      List<ManagedChannel> channels = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        channels.add(h.newChannel());
      }
      ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
      long start = System.nanoTime();
      try {
        List<Future<Integer>> results = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
          String me = "client-" + c;
          LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channels.get(c % 4));
          results.add(clients.submit(() -> {
            int granted = 0;
            for (int i = 0; i < GRANTS_PER_CLIENT; i++) {
              String r = RESOURCES[ThreadLocalRandom.current().nextInt(RESOURCES.length)];
              Lease lease = stub.acquire(acquireRequest(r, Duration.ofSeconds(2), Duration.ofSeconds(20), ""))
                  .getLease();
              checker.enter(r, me, lease.getFencingToken());
              Thread.sleep(1 + ThreadLocalRandom.current().nextInt(3));
              checker.exit(r, me);
              boolean released = stub.release(ReleaseRequest.newBuilder()
                  .setResource(r).setToken(lease.getToken()).build()).getReleased();
              assertThat(released).as("%s released its lease on %s", me, r).isTrue();
              granted++;
            }
            return granted;
          }));
        }
        for (Future<Integer> f : results) {
          assertThat(f.get(3, TimeUnit.MINUTES)).isEqualTo(GRANTS_PER_CLIENT);
        }
      } finally {
        clients.shutdownNow();
        channels.forEach(ManagedChannel::shutdownNow);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf("%d grants in %.1f s (%.0f grants/s over %d resources)%n",
          checker.sections.get(), seconds, checker.sections.get() / seconds, RESOURCES.length);
      assertThat(checker.sections.get()).isEqualTo(CLIENTS * GRANTS_PER_CLIENT);
      assertThat(checker.overlaps.get()).isZero();
      assertThat(checker.fenceViolations.get()).isZero();
    }
  }
}
