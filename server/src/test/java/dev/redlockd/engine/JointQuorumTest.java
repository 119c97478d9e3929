package dev.redlockd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A membership change's joint step (--redis OLD --redis-next NEW): which sets a key lives on,
 * and that a grant or renewal needs a quorum of its old set and of its new set. Round logic
 * over canned node replies; the same over real redis-server processes is JointRoundRedisTest.
 */
class JointQuorumTest {
  private static final String TOKEN = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  private static final Duration TTL = Duration.ofSeconds(10);
  /** OLD is a..e, NEW replaces e by f; with five nodes per key every key lives on all of its list. */
  private static final List<String> IDS = List.of("a", "b", "c", "d", "e", "f");
  private static final List<String> OLD = List.of("a", "b", "c", "d", "e");
  private static final List<String> NEW = List.of("a", "b", "c", "d", "f");

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final AtomicLong clock = new AtomicLong();
  private final Map<String, Map<String, Object>> replies = new ConcurrentHashMap<>();
  private final List<ScriptedNode> nodes = new ArrayList<>();
  private Redlock redlock;

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private static boolean[] in(List<String> ids, List<String> listed) {
    boolean[] in = new boolean[ids.size()];
    for (int i = 0; i < ids.size(); i++) {
      in[i] = listed.contains(ids.get(i));
    }
    return in;
  }

  /** Six nodes a..f, every one granting and holding, under OLD and NEW at once. */
  private void jointNodes(boolean thrifty) {
    for (String name : IDS) {
      Map<String, Object> mine = new ConcurrentHashMap<>(Map.of(
          "acquire", List.of(1L, 7L, 1L),
          "extend", List.of(1L, 1L, 7L),
          "restore", List.of(1L, 1L),
          "release", List.of(1L, 1L),
          "abandon", List.of(1L, 1L),
          "probe", List.of("up", 0L, 0L)));
      replies.put(name, mine);
      nodes.add(new ScriptedNode(name, mine::get));
    }
    EngineConfig config = EngineConfig.defaults().withThriftyRounds(thrifty);
    Keys keys = new Keys(config.keyPrefix());
    List<RedisNode> all = List.copyOf(nodes);
    NodeMonitor monitor = new NodeMonitor(all, keys, config, scheduler, () -> 0L, clock::get,
        new java.security.SecureRandom(), 5);
    ScriptedNode.watchedBy(monitor, all, clock::get);
    monitor.start(Duration.ofSeconds(1)).join();
    Placements placements = new Placements(all, IDS, in(IDS, OLD), in(IDS, NEW), 5, 5);
    redlock = new Redlock(all, keys, config, clock::get, monitor, 42L, new Backlog(clock::get), () -> 0L,
        placements);
  }

  private ScriptedNode node(String name) {
    return nodes.get(IDS.indexOf(name));
  }

  private void answer(String script, Object reply, String... names) {
    for (String name : names) {
      replies.get(name).put(script, reply);
    }
  }

  private static final List<Long> REFUSED = List.of(0L, 0L, 1L);
  private static final List<Long> NOT_HELD = List.of(1L, 0L, 0L);

  @Test
  void aQuorumOfTheOldSetAloneIsNoGrant() {
    jointNodes(false);
    answer("acquire", REFUSED, "c", "d", "f"); // a, b, e: three of OLD, two of NEW

    assertThatThrownBy(() -> redlock.acquire("r", TOKEN, "", TTL).join()).hasCauseInstanceOf(LockHeldException.class);
  }

  @Test
  void aQuorumOfTheNewSetAloneIsNoGrant() {
    jointNodes(false);
    answer("acquire", REFUSED, "c", "d", "e"); // a, b, f: two of OLD, three of NEW

    assertThatThrownBy(() -> redlock.acquire("r", TOKEN, "", TTL).join()).hasCauseInstanceOf(LockHeldException.class);
  }

  @Test
  void aQuorumOfBothSetsIsAGrant() {
    jointNodes(false);
    answer("acquire", REFUSED, "c", "d"); // a, b, e of OLD and a, b, f of NEW

    Grant lease = redlock.acquire("r", TOKEN, "", TTL).join();

    assertThat(lease.fencingToken()).isEqualTo(7L);
  }

  @Test
  void aRenewalOfALeaseGrantedUnderTheOldListAloneMovesItOntoTheNewSet() {
    jointNodes(false);
    // Granted under OLD alone on a, b, e: f never heard of it, and c and d lost it.
    answer("extend", NOT_HELD, "c", "d", "f");

    Grant renewed = redlock.extend("r", TOKEN, TTL).join();

    assertThat(renewed.fencingToken()).isEqualTo(7L);
    for (String name : List.of("c", "d", "f")) {
      assertThat(node(name).calls).as(name).containsExactly("extend", "restore");
    }
    assertThat(node("e").calls).containsExactly("extend");
  }

  @Test
  void aLeaseTheOldSetDoesNotHoldIsNotMovedAndNotRenewed() {
    jointNodes(false);
    answer("extend", NOT_HELD, "c", "d", "e"); // a, b, f hold it: a quorum of NEW only

    assertThatThrownBy(() -> redlock.extend("r", TOKEN, TTL).join())
        .hasCauseInstanceOf(LeaseNotHeldException.class);
    for (ScriptedNode node : nodes) {
      assertThat(node.calls).doesNotContain("restore");
    }
  }

  @Test
  void aMoveRefusedWhereAnotherTokenHoldsTheNodeLeavesTheRenewalShortOfTheNewSet() {
    jointNodes(false);
    answer("extend", NOT_HELD, "c", "d", "f");
    answer("restore", List.of(0L, 1L), "c", "d", "f"); // other tokens hold it there: never written over

    assertThatThrownBy(() -> redlock.extend("r", TOKEN, TTL).join())
        .hasCauseInstanceOf(LeaseNotHeldException.class);
  }

  @Test
  void aThriftyGrantAsksNodesOfBothSetsFirst() {
    jointNodes(true);

    redlock.acquire("r", TOKEN, "", TTL).join();

    Set<String> asked = nodes.stream().filter(n -> !n.calls.isEmpty()).map(ScriptedNode::name)
        .collect(Collectors.toSet());
    assertThat(asked).hasSize(3).isSubsetOf(Set.of("a", "b", "c", "d"));
  }

  @Test
  void aThriftyGrantWidensWithinTheSetThatFellShort() {
    jointNodes(true);
    Placement placed = redlock.placement("r", 0);
    int[] order = redlock.order(placed);
    // The first three shared nodes: refusing one of them leaves both sets a node short, and
    // the fourth shared node stands in for both.
    String refusing = placed.nodes().get(order[0]).name();
    answer("acquire", REFUSED, refusing);

    redlock.acquire("r", TOKEN, "", TTL).join();

    assertThat(node("e").calls).isEmpty();
    assertThat(node("f").calls).isEmpty();
  }

  /** Every quorum of the joint step meets every quorum of OLD alone and of NEW alone: what makes it safe. */
  @Test
  void everyJointQuorumMeetsEveryQuorumOfEitherListAlone() {
    boolean[] inOld = in(IDS, OLD);
    boolean[] inNew = in(IDS, NEW);
    Quorum joint = Quorum.joint(inOld, inNew);
    Quorum oldAlone = Quorum.joint(inOld, inOld).only(0);
    Quorum newAlone = Quorum.joint(inNew, inNew).only(0);
    int n = IDS.size();
    int jointQuorums = 0;
    for (int a = 0; a < 1 << n; a++) {
      if (!joint.metBy(mask(a, n))) {
        continue;
      }
      jointQuorums++;
      for (int b = 0; b < 1 << n; b++) {
        if (oldAlone.metBy(mask(b, n)) || newAlone.metBy(mask(b, n)) || joint.metBy(mask(b, n))) {
          assertThat(a & b).as("quorums %s and %s", Integer.toBinaryString(a), Integer.toBinaryString(b))
              .isNotZero();
        }
      }
    }
    assertThat(jointQuorums).isPositive();
    // And a quorum of OLD alone may miss one of NEW alone: why the joint step is needed.
    assertThat(oldAlone.metBy(mask(0b010011, n))).isTrue(); // a, b, e
    assertThat(newAlone.metBy(mask(0b101100, n))).isTrue(); // c, d, f
  }

  @Test
  void withOneListTheQuorumIsTheMajorityCount() {
    for (int n = 1; n <= 9; n++) {
      Quorum majority = Quorum.majority(n);
      for (int a = 0; a < 1 << n; a++) {
        assertThat(majority.metBy(mask(a, n))).isEqualTo(Integer.bitCount(a) >= Tally.quorumOf(n));
      }
      assertThat(majority.smallest()).isEqualTo(Tally.quorumOf(n));
    }
  }

  private static boolean[] mask(int bits, int n) {
    boolean[] mask = new boolean[n];
    for (int i = 0; i < n; i++) {
      mask[i] = (bits & (1 << i)) != 0;
    }
    return mask;
  }

  /** Each set of a joint placement is the set a replica given that list alone computes for the key. */
  @Test
  void aKeysSetsAreTheSetsEachListAloneGivesIt() {
    List<RedisNode> all = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      all.add(ScriptedNode.silent("10.0.0." + i + ":6379"));
      ids.add("n" + i);
    }
    List<String> oldIds = ids.subList(0, 9); // n9 is added, then n0 removed
    List<String> newIds = ids.subList(1, 10);
    Placements joint = new Placements(all, ids, in(ids, oldIds), in(ids, newIds), 5, 5);
    Placements oldAlone = new Placements(all.subList(0, 9), oldIds, 5);
    Placements newAlone = new Placements(all.subList(1, 10), newIds, 5);
    int moved = 0;
    for (int k = 0; k < 500; k++) {
      String key = "redlock:lock:res" + k;
      Placement p = joint.of(key);
      Set<String> oldSet = new java.util.HashSet<>();
      Set<String> newSet = new java.util.HashSet<>();
      for (int i = 0; i < p.nodes().size(); i++) {
        if (p.quorum().inSet(0, i)) {
          oldSet.add(p.nodes().get(i).name());
        }
        if (p.quorum().inSet(1, i)) {
          newSet.add(p.nodes().get(i).name());
        }
      }
      assertThat(oldSet).isEqualTo(Set.copyOf(oldAlone.of(key).nodes().stream().map(RedisNode::name).toList()));
      assertThat(newSet).isEqualTo(Set.copyOf(newAlone.of(key).nodes().stream().map(RedisNode::name).toList()));
      moved += oldSet.equals(newSet) ? 0 : 1;
      // The nodes of both sets come first in the order a thrifty round asks.
      int shared = (int) oldSet.stream().filter(newSet::contains).count();
      for (int i = 0; i < p.ranked().length; i++) {
        int node = p.ranked()[i];
        assertThat(p.quorum().inSet(0, node) && p.quorum().inSet(1, node)).isEqualTo(i < shared);
      }
    }
    assertThat(moved).isPositive();
  }
}
