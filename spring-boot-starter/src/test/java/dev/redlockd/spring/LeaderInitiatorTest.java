package dev.redlockd.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's LockRegistryLeaderInitiator over a RedlockdLockRegistry, in two Spring
 * Boot applications against the real server and 5 real Redis nodes: leadership moves to the
 * other application when the leader stops, and a leader whose lease is lost while 3 of the 5
 * nodes are frozen (SIGSTOP) is revoked; at no moment do both hold the lease. The hand-over times are
 * printed; they are observations on whatever machine runs the test (a loaded one stretches
 * them), and each is asserted only against the bound its mechanism sets.
 */
@ExtendWith(BackendExtension.class)
class LeaderInitiatorTest {
  /** The leases' ttl: how long a leader keeps its lease once renewals stop reaching a quorum. */
  private static final Duration TTL = Duration.ofSeconds(2);
  /** LockRegistryLeaderInitiator's default heartbeat: how long each tryLock of a candidate waits. */
  private static final Duration HEARTBEAT = Duration.ofMillis(LockRegistryLeaderInitiator.DEFAULT_HEART_BEAT_TIME);

  private final Backend backend;
  private final Timeline timeline = new Timeline();

  LeaderInitiatorTest(Backend backend) {
    this.backend = backend;
  }

  /** Every grant and revocation, in order, with its time on the monotonic clock. */
  static final class Timeline {
    record Change(long nanos, String app, boolean leading) {}

    private final List<Change> changes = new CopyOnWriteArrayList<>();
    /** The leases under the leaderships: taken, and given back or lost, as the registries report them. */
    private final List<Change> leases = new CopyOnWriteArrayList<>();
    private final List<Long> losses = new CopyOnWriteArrayList<>();

    void lease(String app, boolean held) {
      leases.add(new Change(System.nanoTime(), app, held));
    }

    /** A lease loss reported to the application (RedlockdLockLostEvent). */
    void lost() {
      losses.add(System.nanoTime());
    }

    long lossAfter(long sinceNanos) {
      return losses.stream().filter(n -> n >= sinceNanos).mapToLong(Long::longValue).min().orElse(-1);
    }

    void record(String app, boolean leading) {
      changes.add(new Change(System.nanoTime(), app, leading));
    }

    /** The first grant to {@code app} at or after {@code sinceNanos}, or -1. */
    long grantedAfter(String app, long sinceNanos) {
      return first(app, true, sinceNanos);
    }

    long revokedAfter(String app, long sinceNanos) {
      return first(app, false, sinceNanos);
    }

    long anyGrantAfter(long sinceNanos) {
      return changes.stream().filter(c -> c.leading && c.nanos >= sinceNanos).mapToLong(Change::nanos).min()
          .orElse(-1);
    }

    private long first(String app, boolean leading, long sinceNanos) {
      return changes.stream().filter(c -> c.app.equals(app) && c.leading == leading && c.nanos >= sinceNanos)
          .mapToLong(Change::nanos).min().orElse(-1);
    }

    /** Replays the leases: never two applications holding one at once. */
    void assertNeverTwoLeases() {
      assertNeverTwo(leases, "holders");
    }

    /** Replays the grants and revocations: never two leaders at once. */
    void assertNeverTwoLeaders() {
      assertNeverTwo(changes, "leaders");
    }

    private static void assertNeverTwo(List<Change> changes, String what) {
      List<String> leading = new ArrayList<>();
      for (Change c : changes) {
        if (c.leading) {
          assertThat(leading).as("%s when %s began, at %s", what, c.app, changes).isEmpty();
          leading.add(c.app);
        } else {
          leading.remove(c.app);
        }
      }
    }
  }

  /** One application: the starter's auto-configuration and a leader initiator for one role. */
  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(RedlockdAutoConfiguration.class)
  static class LeaderApp {
    static Timeline timeline;

    @Bean
    ApplicationListener<RedlockdLockLostEvent> lossRecorder() {
      Timeline recorded = timeline;
      return event -> recorded.lost();
    }

    @Bean
    SmartInitializingSingleton leaseRecorder(RedlockdLockRegistry locks, @Value("${test.app}") String app) {
      Timeline recorded = timeline;
      return () -> locks.addListener(new RedlockdLockListener() {
        @Override
        public void acquired(String lockKey, Duration waited) {
          recorded.lease(app, true);
        }

        @Override
        public void released(String lockKey) {
          recorded.lease(app, false);
        }

        @Override
        public void lost(String lockKey, RedlockdLockLostException lost) {
          recorded.lease(app, false);
        }
      });
    }

    @Bean
    LockRegistryLeaderInitiator leaderInitiator(RedlockdLockRegistry locks, @Value("${test.app}") String app,
        @Value("${test.role}") String role) {
      Timeline recorded = timeline;
      return new LockRegistryLeaderInitiator(locks, new DefaultCandidate(app, role) {
        @Override
        public void onGranted(Context context) {
          recorded.record(app, true);
        }

        @Override
        public void onRevoked(Context context) {
          recorded.record(app, false);
        }
      });
    }
  }

  private ConfigurableApplicationContext start(String app, String role) {
    LeaderApp.timeline = timeline;
    return new SpringApplicationBuilder(LeaderApp.class)
        .web(WebApplicationType.NONE)
        .logStartupInfo(false)
        .properties("redlockd.targets=" + backend.target(), "redlockd.lock-registry.ttl=" + TTL.toMillis() + "ms",
            "redlockd.lock-registry.prefix=leader-test/", "test.app=" + app, "test.role=" + role,
            "spring.main.banner-mode=off")
        .run();
  }

  /** Application a, leading once granted, and application b, a candidate for the same role. */
  private record Apps(ConfigurableApplicationContext a, ConfigurableApplicationContext b) implements AutoCloseable {
    @Override
    public void close() {
      a.close();
      if (b != null) {
        b.close();
      }
    }
  }

  private Apps leaderThenCandidate(String role) {
    ConfigurableApplicationContext a = start("a", role);
    try {
      await().atMost(Duration.ofSeconds(10)).until(() -> timeline.grantedAfter("a", 0) > 0);
      return new Apps(a, start("b", role));
    } catch (RuntimeException | Error e) {
      a.close();
      throw e;
    }
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }

  @Test
  void leadershipMovesToTheOtherApplicationWhenTheLeaderStops() {
    String role = "role-" + UUID.randomUUID();
    try (Apps apps = leaderThenCandidate(role)) {
      long leaderFence = backend.fencingToken("leader-test/" + role);
      assertThat(apps.b().getBean(LockRegistryLeaderInitiator.class).getContext().isLeader()).isFalse();
      long stopped = System.nanoTime();
      apps.a().close();
      await().atMost(Duration.ofSeconds(10)).until(() -> timeline.grantedAfter("b", stopped) > 0);
      long granted = timeline.grantedAfter("b", stopped);
      await().atMost(Duration.ofSeconds(10)).until(() -> timeline.revokedAfter("a", stopped) > 0);
      long revoked = timeline.revokedAfter("a", stopped);
      System.out.printf("leader initiator hand-over when the leader's application stops: %.1f ms from the "
          + "context's close to the other's grant (observed on this machine, under its load); the stopping "
          + "leader's onRevoked came %.1f ms after that grant%n", ms(granted - stopped), ms(revoked - granted));
      // The stopping leader releases its lease; the waiting candidate's Acquire is woken by the
      // release, so it needs no more than its own heartbeat-long tryLock and one busy wait.
      assertThat(Duration.ofNanos(granted - stopped)).isLessThan(HEARTBEAT.multipliedBy(2).plus(TTL));
      // b holds a new lease, granted after a's: its fencing token is higher. (The candidates'
      // callbacks may overlap: LockRegistryLeaderInitiator, stopping, unlocks and only then calls
      // onRevoked, whatever the registry; the leases under them do not.)
      assertThat(backend.held("leader-test/" + role)).isTrue();
      assertThat(backend.fencingToken("leader-test/" + role)).isGreaterThan(leaderFence);
    }
  }

  @Test
  void aLeaderThatLosesItsLeaseWhileAQuorumOfNodesIsFrozenIsRevokedAndLeadershipComesBack() {
    String role = "role-" + UUID.randomUUID();
    try (Apps ignored = leaderThenCandidate(role)) {
      long frozen = System.nanoTime();
      backend.redis.pause(0, 1, 2);
      long allFrozen = System.nanoTime();
      long revoked;
      long thawing;
      try {
        await().atMost(TTL.plus(HEARTBEAT).plusSeconds(5)).until(() -> timeline.revokedAfter("a", frozen) > 0);
        revoked = timeline.revokedAfter("a", frozen);
        assertThat(timeline.anyGrantAfter(frozen)).as("no one leads without a quorum").isEqualTo(-1);
      } finally {
        thawing = System.nanoTime(); // before the first node thaws: a grant may follow at once
        backend.redis.resume(0, 1, 2);
      }
      long thawed = thawing;
      long lost = timeline.lossAfter(frozen);
      await().atMost(Duration.ofSeconds(20)).until(() -> timeline.anyGrantAfter(thawed) > 0);
      long granted = timeline.anyGrantAfter(thawed);
      String next = timeline.grantedAfter("b", thawed) == granted ? "b" : "a";
      System.out.printf("leader initiator with 3 of 5 Redis nodes frozen (lease ttl %d ms, heartbeat %d ms): the "
          + "loss was published %.1f ms and the leader revoked %.1f ms after the freeze began (%.1f ms to freeze "
          + "them); %s was granted %.1f ms after the thaw began (observed on this machine, under its load)%n",
          TTL.toMillis(), HEARTBEAT.toMillis(), ms(lost - frozen), ms(revoked - frozen), ms(allFrozen - frozen),
          next, ms(granted - thawed));
      // A renewal that reached a quorum was sent before the last of the 3 nodes froze, so the
      // lease's deadline is within a ttl of that, and the client reports the loss a guard before.
      assertThat(lost).as("the loss is published").isPositive();
      assertThat(Duration.ofNanos(lost - allFrozen)).isLessThan(TTL);
      // The initiator looks again after each heartbeat: the revocation follows within one, plus
      // the tryLock that finds the loss.
      assertThat(Duration.ofNanos(revoked - lost)).isLessThan(HEARTBEAT.multipliedBy(2));
      timeline.assertNeverTwoLeases();
      timeline.assertNeverTwoLeaders();
    } finally {
      backend.redis.resumeAll();
    }
  }
}
