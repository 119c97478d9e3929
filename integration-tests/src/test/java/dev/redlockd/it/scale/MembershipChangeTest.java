package dev.redlockd.it.scale;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.client.Channels;
import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockNotAcquiredException;
import dev.redlockd.client.LockOptions;
import dev.redlockd.client.LockServiceException;
import dev.redlockd.it.support.ExclusionChecker;
import dev.redlockd.it.support.FreePort;
import dev.redlockd.server.RedlockdServer;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerFlags;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A node added, then a node removed, under load, through the three steps of a membership change
 * (docs/operating.md, "Growing past five nodes"): two real server replicas over real sockets,
 * each restarted in turn at every step, so that for a while one runs a step and the other the
 * step before. Seven nodes with five per resource, then eight, then seven again without one of
 * the first. Contending clients never overlap and their fences rise, leases kept alive through
 * the whole change are never lost, and no competitor gets one of them.
 */
class MembershipChangeTest {
  private static final int PER_RESOURCE = 5;
  private static final Duration MAX_TTL = Duration.ofSeconds(3);
  private static final Duration SECTION_TTL = Duration.ofSeconds(2);
  private static final Duration KEPT_TTL = Duration.ofSeconds(3);
  private static final int CONTENDERS = 6;
  private static final int KEPT = 12;
  private static final String[] RESOURCES = {"mc-a", "mc-b", "mc-c"};
  /** The node the change adds, then the one it removes. */
  private static final int ADDED = 7;
  private static final int REMOVED = 2;

  private final List<Integer> ports = List.of(FreePort.pick(), FreePort.pick());
  private final RedlockdServer[] replicas = new RedlockdServer[2];
  private RedisCluster cluster;

  @Test
  void contendingClientsNeverOverlapAndKeptLeasesLiveThroughAnAddAndARemove() throws Exception {
    cluster = RedisCluster.start(8);
    ExclusionChecker checker = new ExclusionChecker();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger lost = new AtomicInteger();
    AtomicInteger competitorsGranted = new AtomicInteger();
    ExecutorService contenders = Executors.newFixedThreadPool(CONTENDERS);
    List<ManagedChannel> channels = new ArrayList<>();
    try {
      String oldList = list(IntStream.range(0, ADDED));
      String grown = list(IntStream.rangeClosed(0, ADDED));
      String shrunk = list(IntStream.rangeClosed(0, ADDED).filter(i -> i != REMOVED));
      for (int i = 0; i < 2; i++) {
        replicas[i] = start(i, oldList, null);
      }
      LockClient holder = client(channels);
      LockClient competitor = client(channels);
      List<Lease> kept = new ArrayList<>();
      for (int i = 0; i < KEPT; i++) {
        Lease lease = holder.acquire("mc-kept-" + i, LockOptions.ttl(KEPT_TTL).keepAlive());
        lease.onLost(e -> lost.incrementAndGet());
        kept.add(lease);
      }
      for (int c = 0; c < CONTENDERS; c++) {
        LockClient locks = client(channels);
        String id = "contender-" + c;
        contenders.submit(() -> contend(locks, id, checker, running, refused));
      }

      change(oldList, grown, competitor, kept, competitorsGranted);
      int keptOnAdded = keysOn(ADDED, "mc-kept-");
      change(grown, shrunk, competitor, kept, competitorsGranted);

      running.set(false);
      contenders.shutdown();
      assertThat(contenders.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      long stillValid = kept.stream().filter(Lease::isValid).count();
      System.out.printf("membership change (7 -> 8 -> 7 nodes, %d per resource, two replicas restarted at each of "
          + "6 steps): %d sections, %d overlaps, %d falling fences, %d acquires refused or failed; %d of %d kept "
          + "leases valid, %d lost, %d on the added node after the add; %d competitors granted a kept lease%n",
          PER_RESOURCE, checker.sections.get(), checker.overlaps.get(), checker.fenceViolations.get(),
          refused.get(), stillValid, KEPT, lost.get(), keptOnAdded, competitorsGranted.get());
      assertThat(checker.overlaps.get()).isZero();
      assertThat(checker.fenceViolations.get()).isZero();
      assertThat(checker.sections.get()).as("sections through the change").isGreaterThan(CONTENDERS);
      assertThat(lost.get()).as("kept leases lost").isZero();
      assertThat(stillValid).isEqualTo(KEPT);
      assertThat(competitorsGranted.get()).isZero();
      // Renewals under the joint step wrote the kept leases onto their new sets, the added node among them.
      assertThat(keptOnAdded).as("kept leases moved onto the added node").isPositive();
      for (Lease lease : kept) {
        assertThat(lease.release()).isTrue();
      }
    } finally {
      running.set(false);
      contenders.shutdownNow();
      for (ManagedChannel channel : channels) {
        channel.shutdownNow();
      }
      for (RedlockdServer replica : replicas) {
        if (replica != null) {
          replica.close();
        }
      }
      cluster.close();
    }
  }

  /**
   * The three steps from {@code from} to {@code to}, each replica restarted in turn at each:
   * both lists; then, once no record of {@code from} alone is left on the nodes, {@code to} alone.
   * After each step a competitor tries every kept lease's resource and must be refused.
   */
  private void change(String from, String to, LockClient competitor, List<Lease> kept, AtomicInteger granted)
      throws Exception {
    for (int i = 0; i < 2; i++) {
      restart(i, from, to);
    }
    tryToTake(competitor, kept, granted);
    awaitNoRecordOfTheOldListAlone();
    for (int i = 0; i < 2; i++) {
      restart(i, to, null);
    }
    tryToTake(competitor, kept, granted);
  }

  /**
   * Step two's signal, read from each replica: a record of the old list alone lives at most
   * max-ttl + two heartbeats + drift from the last restart of a replica that ran it, so the wait
   * is bounded by the first reading plus a heartbeat's slack.
   */
  private void awaitNoRecordOfTheOldListAlone() throws InterruptedException {
    Duration first = replicas[0].engine().membershipOldAloneRemaining();
    for (RedlockdServer replica : replicas) {
      first = max(first, replica.engine().membershipOldAloneRemaining());
    }
    long deadline = System.nanoTime() + first.plusSeconds(3).toNanos();
    while (!replicas[0].engine().membershipOldAloneRemaining().isZero()
        || !replicas[1].engine().membershipOldAloneRemaining().isZero()) {
      assertThat(System.nanoTime()).as("old-alone records gone by the bound they gave").isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private static void tryToTake(LockClient competitor, List<Lease> kept, AtomicInteger granted) {
    for (Lease lease : kept) {
      try (Lease taken = competitor.acquire(lease.resource(), LockOptions.ttl(Duration.ofSeconds(1)))) {
        granted.incrementAndGet();
      } catch (LockNotAcquiredException expected) {
        // held by the keeper, as it should be
      } catch (LockServiceException unavailable) {
        // a round that could not reach a quorum grants nothing either
      }
    }
  }

  private static void contend(LockClient locks, String id, ExclusionChecker checker, AtomicBoolean running,
      AtomicInteger refused) {
    int n = 0;
    while (running.get()) {
      String resource = RESOURCES[n++ % RESOURCES.length];
      try (Lease lease = locks.acquire(resource, LockOptions.ttl(SECTION_TTL).waitUpTo(Duration.ofSeconds(2)))) {
        checker.enter(resource, id, lease.fencingToken());
        Thread.sleep(3);
        checker.exit(resource, id);
      } catch (LockServiceException e) {
        refused.incrementAndGet();
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void restart(int i, String redis, String next) throws Exception {
    replicas[i].close(); // as SIGTERM does: kept streams are handed on, nothing is released
    replicas[i] = start(i, redis, next);
  }

  private RedlockdServer start(int i, String redis, String next) throws Exception {
    List<String> flags = new ArrayList<>(List.of("--port", Integer.toString(ports.get(i)), "--redis", redis,
        "--nodes-per-resource", Integer.toString(PER_RESOURCE), "--max-ttl", MAX_TTL.toSeconds() + "s"));
    if (next != null) {
      flags.addAll(List.of("--redis-next", next));
    }
    return RedlockdServer.start(ServerConfig.parse(ServerFlags.forTest(flags).toArray(String[]::new)));
  }

  private LockClient client(List<ManagedChannel> channels) {
    ManagedChannel channel = Channels.forAddresses(
        ports.stream().map(p -> "127.0.0.1:" + p).toList(), InsecureChannelCredentials.create()).build();
    channels.add(channel);
    return LockClient.builder(channel).resetBackoffOn(channel).callTimeout(Duration.ofSeconds(3)).build();
  }

  /** {@code --redis} with stable ids: a node keeps its id ("n" and its index) whatever list it is in. */
  private String list(IntStream nodes) {
    return nodes.mapToObj(i -> "n" + i + "=" + cluster.uris().get(i)).collect(Collectors.joining(","));
  }

  private int keysOn(int node, String prefix) {
    Object keys = cluster.call(node, "KEYS", "*{" + prefix + "*");
    return keys instanceof List<?> list ? list.size() : 0;
  }
}
