package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Release says false, and Extend NOT_FOUND, only when the lease is known not to be held by a
 * quorum; when silent nodes could make the difference the outcome is unknown (UNAVAILABLE).
 */
class ReleaseOutcomeTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.start(5, EngineHarness.testConfig());
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  /** Acquires, and waits until every node holds it (see {@link EngineHarness#onEveryNode}). */
  private static Grant acquireOnEveryNode(String resource) {
    return h.onEveryNode(h.engine.acquire(resource, TTL, Duration.ZERO, "").join());
  }

  private static void dropKeyOn(String resource, int... nodes) {
    for (int i : nodes) {
      h.cluster.call(i, "DEL", "redlock:{" + resource + "}:lock");
    }
  }

  @Test
  void silentHolderMakesTheOutcomeUnknownNotFalse() {
    Grant lease = acquireOnEveryNode("release-silent");
    dropKeyOn("release-silent", 3, 4); // held on 0, 1, 2 only
    h.cluster.pause(0);
    try {
      // Nodes 1 and 2 delete it, node 0 does not answer: held by a quorum or not, nobody knows.
      assertThatThrownBy(() -> h.engine.release("release-silent", lease.token()).join())
          .hasCauseInstanceOf(QuorumUnavailableException.class);
    } finally {
      h.cluster.resume(0);
    }
  }

  @Test
  void leaseHeldByTooFewNodesIsFalseEvenWithANodeSilent() {
    Grant lease = acquireOnEveryNode("release-minority");
    dropKeyOn("release-minority", 1, 2, 3, 4); // held on node 0 only
    h.cluster.pause(4);
    try {
      // One deletion, and one silent node that might hold it: at most 2 of 5, not a quorum.
      assertThat(h.engine.release("release-minority", lease.token()).join()).isFalse();
    } finally {
      h.cluster.resume(4);
    }
  }

  @Test
  void leaseHeldByAQuorumIsReleasedWithANodeSilent() {
    Grant lease = acquireOnEveryNode("release-quorum");
    h.cluster.pause(4);
    try {
      assertThat(h.engine.release("release-quorum", lease.token()).join()).isTrue();
    } finally {
      h.cluster.resume(4);
    }
  }

  @Test
  void extendWithASilentHolderIsUnavailableNotNotFound() {
    Grant lease = acquireOnEveryNode("extend-silent");
    dropKeyOn("extend-silent", 3, 4); // held on 0, 1, 2 only
    h.cluster.pause(0);
    try {
      assertThatThrownBy(() -> h.engine.extend("extend-silent", lease.token(), TTL).join())
          .hasCauseInstanceOf(QuorumUnavailableException.class);
    } finally {
      h.cluster.resume(0);
    }
    // Once node 0 answers again, the lease turns out to be held by a quorum after all.
    assertThat(h.engine.extend("extend-silent", lease.token(), TTL).join().fencingToken())
        .isEqualTo(lease.fencingToken());
  }

  @Test
  void extendOfALeaseHeldByTooFewNodesIsNotFoundEvenWithANodeSilent() {
    Grant lease = acquireOnEveryNode("extend-minority");
    dropKeyOn("extend-minority", 1, 2, 3, 4);
    h.cluster.pause(4);
    try {
      assertThatThrownBy(() -> h.engine.extend("extend-minority", lease.token(), TTL).join())
          .hasCauseInstanceOf(LeaseNotHeldException.class);
    } finally {
      h.cluster.resume(4);
    }
  }
}
