package dev.redlockd.engine;

import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the nodes record the step of a membership change. Every heartbeat, a replica writes on
 * every node of its list(s) its record, {@code alone:<ids>} or {@code joint:<old ids>|<new ids>},
 * alive for {@code --max-ttl} plus two heartbeats plus the drift allowance by the node's own
 * clock: while a record is alive on a node, a lease granted under that list alone (or jointly)
 * may still be valid. From the records it reads back it tells:
 *
 * <ul>
 *   <li>at start, whether it would break the change ({@link #refusal}): with one list L, an
 *       {@code alone} record of another list (two lists alone at once is the unsafe case) or a
 *       {@code joint} record whose old list is L (the change away from L began); with OLD and
 *       NEW, an {@code alone} record of a third list. One script call per node writes its own
 *       record and reads the others at once: of two racing starts, the one that runs second on
 *       a node both reach sees the other (a wait between a write and a read would add nothing).
 *       Without a quorum of each list answering it cannot tell, and starts all the same (a
 *       replica starts while its nodes are down, and serves UNAVAILABLE until they answer),
 *       saying so, and checks again every heartbeat;
 *   <li>while running, the same conflicts (logged and counted, not acted on: a replica that stopped
 *       serving would free nothing, the leases it granted stay valid until their ttl);
 *   <li>during the joint step, how long a record of OLD alone lives on ({@link #oldAloneRemaining}):
 *       step three may start when that reads zero.
 * </ul>
 */
final class MembershipRecords {
  private static final Logger log = LoggerFactory.getLogger(MembershipRecords.class);
  static final LuaScript SCRIPT = LuaScript.load(MembershipRecords.class, "membership");
  static final Duration HEARTBEAT = Duration.ofSeconds(1);

  private final List<RedisNode> nodes;
  private final boolean[] inOld;
  private final boolean[] inNew;
  private final String mine;
  private final String oldAlone;
  private final String newAlone;
  private final String oldIds;
  private final String key;
  private final long ttlMillis;
  private final Duration heartbeat;
  private volatile View last = new View(Map.of(), false);
  private volatile String conflictSeen;
  private ScheduledFuture<?> beating;

  /** What one heartbeat read: each record alive on a node that answered, with the most time it has left. */
  record View(Map<String, Long> remainingMillis, boolean quorumsAnswered) {}

  /**
   * @param inNew null: one list ({@code inOld} all true)
   * @param perOld nodes per resource under the old (or only) list, recorded beside its ids: two
   *     lists' quorums meet or not by it too
   */
  MembershipRecords(List<RedisNode> nodes, List<String> ids, boolean[] inOld, boolean[] inNew, int perOld,
      int perNew, Keys keys, EngineConfig config, Duration heartbeat) {
    this.nodes = List.copyOf(nodes);
    this.inOld = inOld.clone();
    this.inNew = inNew == null ? null : inNew.clone();
    this.oldIds = listed(ids, inOld);
    this.oldAlone = "alone:" + oldIds + "/" + perOld;
    this.newAlone = inNew == null ? null : "alone:" + listed(ids, inNew) + "/" + perNew;
    this.mine = inNew == null ? oldAlone : "joint:" + oldIds + "|" + listed(ids, inNew) + "/" + perOld;
    this.key = keys.membership();
    this.heartbeat = heartbeat;
    this.ttlMillis = config.maxTtl().toMillis() + 2 * heartbeat.toMillis() + config.driftNanos(config.maxTtl())
        / 1_000_000 + 1;
  }

  /** The ids a list holds, sorted and comma-separated: the same whatever order the list is written in. */
  private static String listed(List<String> ids, boolean[] in) {
    List<String> listed = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      if (in[i]) {
        listed.add(ids.get(i));
      }
    }
    return String.join(",", listed.stream().sorted().toList());
  }

  /** This replica's record. */
  String record() {
    return mine;
  }

  /** Writes this replica's record on every node of its list(s) and reads back every record alive there. */
  CompletableFuture<View> beat() {
    List<String> args = List.of(mine, Long.toString(ttlMillis));
    return NodeResult.fromAll(nodes, node -> node.eval(SCRIPT, List.of(key), args)).thenApply(results -> {
      Map<String, Long> remaining = new HashMap<>();
      boolean[] answered = new boolean[nodes.size()];
      for (int i = 0; i < results.size(); i++) {
        NodeResult<Object> r = results.get(i);
        if (!r.answered() || !(r.value() instanceof List<?> list)) {
          continue;
        }
        answered[i] = true;
        for (int k = 0; k + 1 < list.size(); k += 2) {
          remaining.merge(String.valueOf(list.get(k)), Replies.number(list.get(k + 1)), Math::max);
        }
      }
      boolean quorums = Quorum.joint(inOld, inOld).only(0).metBy(answered)
          && (inNew == null || Quorum.joint(inNew, inNew).only(0).metBy(answered));
      View view = new View(Map.copyOf(remaining), quorums);
      last = view;
      return view;
    });
  }

  /**
   * Why this replica must not run beside the records in {@code view}, as one line naming the
   * lists and how long to wait; empty when it may.
   */
  Optional<String> refusal(View view) {
    String worst = null;
    long longest = 0;
    for (Map.Entry<String, Long> r : view.remainingMillis().entrySet()) {
      if (conflicts(r.getKey()) && r.getValue() > longest) {
        worst = r.getKey();
        longest = r.getValue();
      }
    }
    if (worst == null) {
      return Optional.empty();
    }
    return Optional.of("this replica runs " + describe(mine) + " but the nodes show replicas running "
        + describe(worst) + " within the last " + Duration.ofMillis(ttlMillis).toSeconds() + " s;"
        + (inNew == null && worst.startsWith("joint:") ? " a change away from this list has begun: start with "
            + "--redis-next, or" : "") + " wait " + seconds(longest) + " s for that record to expire"
        + " (see docs/operating.md, Growing past five nodes)");
  }

  /** Whether a record alive on the nodes says this replica's list(s) would break the change. */
  private boolean conflicts(String record) {
    if (record.equals(mine)) {
      return false;
    }
    if (record.startsWith("alone:")) {
      return !record.equals(oldAlone) && !record.equals(newAlone) && !meets(record, oldAlone)
          && (newAlone == null || !meets(record, newAlone));
    }
    // A joint record: only a replica of one list L minds one whose old list is L.
    return inNew == null && record.startsWith("joint:" + oldIds + "|");
  }

  /**
   * Whether every quorum of one list alone meets every quorum of another alone, both records
   * {@code alone:<ids>/<n>}: only where each puts every resource on all its nodes, and their
   * majorities together exceed the nodes of both lists (adding or removing one node of every-node
   * lists, the steps docs/operating.md gives for those). Sets of fewer nodes may not meet.
   */
  static boolean meets(String one, String other) {
    Alone a = Alone.of(one);
    Alone b = Alone.of(other);
    if (a == null || b == null || a.perKey() != a.ids().size() || b.perKey() != b.ids().size()) {
      return false;
    }
    java.util.Set<String> both = new java.util.HashSet<>(a.ids());
    both.addAll(b.ids());
    return Tally.quorumOf(a.ids().size()) + Tally.quorumOf(b.ids().size()) > both.size();
  }

  /** An {@code alone:<ids>/<n>} record, read. */
  private record Alone(List<String> ids, int perKey) {
    static Alone of(String record) {
      int slash = record.lastIndexOf('/');
      if (!record.startsWith("alone:") || slash < 0) {
        return null;
      }
      try {
        return new Alone(List.of(record.substring("alone:".length(), slash).split(",")),
            Integer.parseInt(record.substring(slash + 1)));
      } catch (NumberFormatException e) {
        return null;
      }
    }
  }

  private static String describe(String record) {
    int slash = record.lastIndexOf('/');
    String n = slash < 0 ? "" : " (--nodes-per-resource " + record.substring(slash + 1) + ")";
    String body = slash < 0 ? record : record.substring(0, slash);
    if (body.startsWith("alone:")) {
      return "--redis " + body.substring("alone:".length()) + " alone" + n;
    }
    String[] lists = body.substring("joint:".length()).split("\\|", 2);
    return "--redis " + lists[0] + " --redis-next " + lists[1] + n;
  }

  private static String seconds(long millis) {
    return String.format(java.util.Locale.ROOT, "%.1f", millis / 1000.0);
  }

  /**
   * How long the record of OLD alone lives on, by the last heartbeat: during the joint step, the
   * longest a lease granted under OLD alone may still be valid (zero when no record is left, or
   * outside a change). Step three may start at zero.
   */
  Duration oldAloneRemaining() {
    if (inNew == null) {
      return Duration.ZERO;
    }
    return Duration.ofMillis(Math.max(0, last.remainingMillis().getOrDefault(oldAlone, 0L)));
  }

  /** Whether the last heartbeat found a record this replica's list(s) conflict with. */
  boolean conflict() {
    return conflictSeen != null;
  }

  /** Beats every heartbeat from now, logging each new conflict found (once, and once when it is gone). */
  void start(ScheduledExecutorService scheduler) {
    beating = scheduler.scheduleWithFixedDelay(() -> beat().thenAccept(view -> watch(view, log::warn)),
        heartbeat.toMillis(), heartbeat.toMillis(), TimeUnit.MILLISECONDS);
  }

  void watch(View view, Consumer<String> warn) {
    String now = refusal(view).orElse(view.quorumsAnswered() ? null : conflictSeen);
    if (now != null && conflictSeen == null) {
      warn.accept("Membership conflict: " + now + ". This replica keeps serving; stop the replicas on the "
          + "wrong list (docs/operating.md, Growing past five nodes)");
    } else if (now == null && conflictSeen != null) {
      log.info("Membership conflict resolved: no record on the nodes conflicts with {}", describe(mine));
    }
    conflictSeen = now;
  }

  void close() {
    if (beating != null) {
      beating.cancel(false);
    }
  }
}
