package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Kept leases due together are renewed by one script call per node: each still gets its own answer. */
class ExtendManyTest {
  private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();
  private static EngineHarness harness;

  @BeforeAll
  static void start() {
    harness = EngineHarness.start(3, EngineHarness.testConfig());
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @Test
  void eachLeaseOfAManyChunkRenewalGetsItsOwnOutcome() throws Exception {
    int leases = Redlock.EXTEND_CHUNK * 2 + 17; // more than one script call per node
    Duration ttl = Duration.ofSeconds(5);
    List<Redlock.Extension> extensions = new ArrayList<>();
    List<Long> fences = new ArrayList<>();
    for (int i = 0; i < leases; i++) {
      String resource = "many-" + i;
      String token = LockToken.generate(RANDOM);
      // Longer than the renewal's ttl, so that a lease left alone still shows it, however slowly
      // a loaded machine acquires the 273 of them one by one.
      Grant lease = harness.engine.acquire(resource, Duration.ofSeconds(30), Duration.ZERO, token)
          .get(2, TimeUnit.SECONDS);
      fences.add(lease.fencingToken());
      // Every third lease is asked for with a token that does not hold it.
      extensions.add(new Redlock.Extension(resource, i % 3 == 0 ? LockToken.generate(RANDOM) : token, ttl));
    }

    List<CompletableFuture<Grant>> renewed = harness.engine.locks().extendAll(extensions);

    assertThat(renewed).hasSize(leases);
    for (int i = 0; i < leases; i++) {
      String resource = "many-" + i;
      if (i % 3 == 0) {
        CompletableFuture<Grant> refused = renewed.get(i);
        assertThat(refused).as(resource).failsWithin(2, TimeUnit.SECONDS)
            .withThrowableOfType(java.util.concurrent.ExecutionException.class)
            .withCauseInstanceOf(LeaseNotHeldException.class);
        // The lease itself was left alone: it still runs out at its first ttl of 30 s, not at the 5 s asked for.
        assertThat((Long) harness.cluster.call(0, "PTTL", harness.engine.config().keyPrefix() + "{" + resource + "}:lock"))
            .isBetween(5_001L, 30_000L);
      } else {
        Grant lease = renewed.get(i).get(2, TimeUnit.SECONDS);
        assertThat(lease.resource()).isEqualTo(resource);
        assertThat(lease.fencingToken()).as(resource).isEqualTo(fences.get(i));
        assertThat(lease.validity()).isGreaterThan(Duration.ofSeconds(4)).isLessThanOrEqualTo(ttl);
        for (int node = 0; node < 3; node++) {
          assertThat((Long) harness.cluster.call(node, "PTTL", harness.engine.config().keyPrefix() + "{" + resource + "}:lock"))
              .as("%s on node %d", resource, node).isGreaterThan(4000L);
        }
      }
    }
  }

  @Test
  void aLeaseRenewedAloneStillWorks() throws Exception {
    String token = LockToken.generate(RANDOM);
    harness.engine.acquire("alone", Duration.ofSeconds(1), Duration.ZERO, token).get(2, TimeUnit.SECONDS);
    Grant lease = harness.engine.extend("alone", token, Duration.ofSeconds(3)).get(2, TimeUnit.SECONDS);
    assertThat(lease.validity()).isGreaterThan(Duration.ofMillis(2900));
    assertThat(harness.engine.extend("alone", LockToken.generate(RANDOM), Duration.ofSeconds(3)))
        .failsWithin(2, TimeUnit.SECONDS)
        .withThrowableOfType(java.util.concurrent.ExecutionException.class)
        .withCauseInstanceOf(LeaseNotHeldException.class);
  }
}
