package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Hundreds of kept leases resuming on one replica at once (its neighbour was stopped and ended
 * their streams; issue 40): each one's first renewal joins the renewal batch, so the burst costs
 * a few many-lease extends per node, not a Redis round per lease, and every first renewal is
 * answered well before its holder gives up waiting.
 */
class ResumedLeasesBatchTest {
  private static final int LEASES = 400;
  private static final Duration TTL = Duration.ofSeconds(3);
  /** As many as a replica's gRPC executor runs the resumed streams' first requests on. */
  private static final int ARRIVING_THREADS = 8;
  private static final int ACQUIRED_TOGETHER = 20;

  @Test
  void aBurstOfResumedLeasesIsRenewedInAFewBatchesAndAnsweredInTime() throws Exception {
    try (EngineHarness h = EngineHarness.start(5, EngineHarness.testConfig())) {
      List<String> tokens = new ArrayList<>();
      // Granted a few at a time, as a client's leases were: 400 acquires at once on a cold engine
      // may miss the node timeout, which is not what this test is about.
      for (int from = 0; from < LEASES; from += ACQUIRED_TOGETHER) {
        List<CompletableFuture<Grant>> grants = new ArrayList<>();
        for (int i = from; i < Math.min(LEASES, from + ACQUIRED_TOGETHER); i++) {
          grants.add(h.engine.acquire("resumed/" + i, TTL, Duration.ZERO, ""));
        }
        for (CompletableFuture<Grant> grant : grants) {
          tokens.add(grant.get(10, TimeUnit.SECONDS).token());
        }
      }
      long[] before = h.scriptCalls();

      List<FirstRenewal> answered = new ArrayList<>();
      List<KeptLease> kept = new ArrayList<>();
      CountDownLatch go = new CountDownLatch(1);
      ExecutorService arriving = Executors.newFixedThreadPool(ARRIVING_THREADS);
      try {
        long[] sentAt = new long[LEASES];
        for (int i = 0; i < LEASES; i++) {
          // A renewal that reached no answer is retried quietly (unconfirmed); the server hands
          // the stream on at the second miss.
          FirstRenewal firstAnswer = new FirstRenewal();
          answered.add(firstAnswer);
          int lease = i;
          KeptLease k = h.engine.keep("resumed/" + i, tokens.get(i), TTL, firstAnswer);
          kept.add(k);
          arriving.execute(() -> {
            try {
              go.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
            sentAt[lease] = System.nanoTime();
            k.renewNow(null, 1);
          });
        }
        go.countDown();
        long slowest = 0;
        int missed = 0;
        for (int i = 0; i < LEASES; i++) {
          slowest = Math.max(slowest, answered.get(i).heldAt.get(TTL.toMillis(), TimeUnit.MILLISECONDS) - sentAt[i]);
          missed += answered.get(i).unconfirmed.get();
        }
        long[] after = h.scriptCalls();
        long calls = 0;
        for (int n = 0; n < after.length; n++) {
          calls = Math.max(calls, after[n] - before[n]);
        }
        System.out.printf("%d resumed leases: first renewals in %d many-lease extends on the busiest node, "
            + "slowest answered after %d ms, %d missed%n", LEASES, calls, TimeUnit.NANOSECONDS.toMillis(slowest), missed);
        // One extend per lease would be LEASES calls on a node. Batched, a node takes one call
        // per chunk of a batch; the batches are as many as the sends the scheduler thread runs
        // while the burst arrives, each taking what arrived during the one before.
        int chunks = (LEASES + Redlock.EXTEND_CHUNK - 1) / Redlock.EXTEND_CHUNK;
        assertThat(calls).as("many-lease extends on a node for %d first renewals", LEASES)
            .isLessThanOrEqualTo(LEASES / 10);
        assertThat(calls).isGreaterThanOrEqualTo(chunks);
        // A client waits a quarter of the ttl (its request period) for a new stream's first answer
        // before taking the stream for silent; each first renewal must come well inside it.
        assertThat(TimeUnit.NANOSECONDS.toMillis(slowest)).as("slowest first renewal, ms")
            .isLessThan(TTL.toMillis() / 4);
      } finally {
        arriving.shutdownNow();
        kept.forEach(KeptLease::stop);
      }
    }
  }
}
