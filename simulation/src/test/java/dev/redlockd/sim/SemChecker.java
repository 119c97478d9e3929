package dev.redlockd.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Watches a semaphore workload for what must never happen: more than N holders of a semaphore
 * with limit N valid at once by their own deadlines (from the grant to the attempt's send time
 * plus the validity, moved only by renewals, as {@link SimChecker} defines it for locks), two
 * holders of one permit valid at once, one token granted two different permits, a fencing
 * token not above every earlier one of its permit, a grant or a valid permit without a quorum
 * of nodes holding it. Trace, failures and crashes go through the lock checker it wraps.
 *
 * <p>The bound is checked where a holder's validity starts or is renewed: the most validities
 * that overlap always overlap at the start of one of them.
 */
final class SemChecker {
  private final SimChecker base;
  private final SimLoop loop;
  private final List<SimHost> hosts;
  private final int quorum;
  private final Map<String, Integer> limits;
  private SimSemaphore semaphore;
  /** Per semaphore: each holder's token and its permit and validity. */
  private final Map<String, Map<String, Held>> live = new HashMap<>();
  /** Per "semaphore#permit": the fences reported. */
  private final Map<String, SimChecker.Fences> fences = new HashMap<>();
  /** Per semaphore, per token: the permit it was granted (a same-token retry must get it back). */
  private final Map<String, Map<String, Integer>> permitOf = new HashMap<>();
  private long overLimitWithNoNodeOver;
  private long grants;
  /** Grants and renewals that left exactly N holders valid: the bound was reached, not kept by a stricter lock. */
  private long full;

  private static final class Held {
    final int permit;
    final long grantedAt;
    long until;

    Held(int permit, long grantedAt, long until) {
      this.permit = permit;
      this.grantedAt = grantedAt;
      this.until = until;
    }
  }

  SemChecker(SimChecker base, SimLoop loop, List<SimHost> hosts, Map<String, Integer> limits) {
    this(base, loop, hosts, limits, hosts.size());
  }

  /** {@code setSize}: how many nodes each semaphore lives on, of which a permit must hold a majority. */
  SemChecker(SimChecker base, SimLoop loop, List<SimHost> hosts, Map<String, Integer> limits, int setSize) {
    this.base = base;
    this.loop = loop;
    this.hosts = hosts;
    this.quorum = setSize / 2 + 1;
    this.limits = limits;
  }

  /** The semaphore whose nodes the quorum checks read (set once it exists: it needs the checker's trace first). */
  void watch(SimSemaphore semaphore) {
    this.semaphore = semaphore;
  }

  SimChecker base() {
    return base;
  }

  void granted(String client, PermitGrant grant, long sentAt) {
    grants++;
    String resource = grant.resource();
    String token = grant.token();
    long until = sentAt + grant.validityNanos();
    base.event(() -> client + " granted " + resource + " permit " + grant.permit() + " " + SimChecker.tag(token)
        + " fence " + grant.fence() + " valid to " + String.format("%.3f", until / 1e6));
    Integer before = permitOf.computeIfAbsent(resource, r -> new HashMap<>()).putIfAbsent(token, grant.permit());
    if (before != null && before != grant.permit()) {
      base.violation(resource + ": " + SimChecker.tag(token) + " was granted permit " + grant.permit()
          + " while it holds permit " + before);
    }
    fence(resource, grant);
    Map<String, Held> holders = live.computeIfAbsent(resource, r -> new HashMap<>());
    Held held = holders.get(token);
    if (held == null) {
      held = new Held(grant.permit(), sentAt, until);
      holders.put(token, held);
    } else {
      held.until = Math.max(held.until, until);
    }
    bound(resource, token, held);
    int holding = holding(resource, token, sentAt);
    if (holding < quorum) {
      base.violation(resource + ": permit " + grant.permit() + " granted to " + SimChecker.tag(token) + " held by "
          + holding + " nodes, quorum " + quorum);
    }
  }

  void renewed(String client, PermitGrant grant, long until) {
    Held held = live.getOrDefault(grant.resource(), Map.of()).get(grant.token());
    if (held == null || until <= held.until) {
      return;
    }
    base.event(() -> client + " renewed " + grant.resource() + " permit " + grant.permit() + " "
        + SimChecker.tag(grant.token()) + " valid to " + String.format("%.3f", until / 1e6));
    fence(grant.resource(), grant);
    held.until = until;
    bound(grant.resource(), grant.token(), held);
  }

  void ended(String client, String resource, String token) {
    base.event(() -> client + " ends " + resource + " " + SimChecker.tag(token));
    Map<String, Held> holders = live.get(resource);
    if (holders != null) {
      holders.remove(token);
    }
    Map<String, Integer> permits = permitOf.get(resource);
    if (permits != null) {
      permits.remove(token);
    }
  }

  private void fence(String resource, PermitGrant grant) {
    if (grant.permit() == 0) {
      return; // no permit identity (the mutant): nothing to fence per permit
    }
    SimChecker.Fences f = fences.computeIfAbsent(resource + "#" + grant.permit(), k -> new SimChecker.Fences());
    long above = f.aboveAllBut(grant.token());
    if (grant.fence() <= above) {
      base.violation(resource + ": fencing token " + grant.fence() + " of permit " + grant.permit() + " granted to "
          + SimChecker.tag(grant.token()) + " is not above " + above + ", already reported to another lease");
    }
    f.report(grant.token(), grant.fence());
  }

  /** At this holder's start or renewal: at most N valid, and no one else on its permit. */
  private void bound(String resource, String token, Held held) {
    long now = loop.now();
    if (held.until <= now) {
      return;
    }
    List<Map.Entry<String, Held>> valid = new ArrayList<>();
    for (Map.Entry<String, Held> other : live.getOrDefault(resource, Map.of()).entrySet()) {
      if (other.getValue().until > now) {
        valid.add(other);
        if (!other.getKey().equals(token) && held.permit != 0 && other.getValue().permit == held.permit) {
          base.violation(resource + ": permit " + held.permit + " of " + SimChecker.tag(token) + " valid while "
              + SimChecker.tag(other.getKey()) + " holds it until " + String.format("%.3f ms", other.getValue().until / 1e6));
        }
      }
    }
    int limit = limits.get(resource);
    if (valid.size() == limit) {
      full++;
    }
    if (valid.size() > limit) {
      base.violation(resource + " (limit " + limit + "): " + valid.size() + " holders valid at once: "
          + witness(resource, valid, limit));
    }
  }

  /** Which nodes hold each of the holders now, and how many holders each node counts. */
  private String witness(String resource, List<Map.Entry<String, Held>> valid, int limit) {
    StringJoiner text = new StringJoiner("; ");
    for (Map.Entry<String, Held> h : valid) {
      StringJoiner on = new StringJoiner(",", "{", "}");
      for (SimHost host : hosts) {
        if (semaphore.holdersOn(host, resource).contains(h.getKey())) {
          on.add(host.name);
        }
      }
      text.add(SimChecker.tag(h.getKey()) + " permit " + h.getValue().permit + " on " + on + " valid to "
          + String.format("%.3f ms", h.getValue().until / 1e6));
    }
    int most = 0;
    StringJoiner counts = new StringJoiner(", ", "per node: ", "");
    for (SimHost host : hosts) {
      int n = semaphore.holdersOn(host, resource).size();
      most = Math.max(most, n);
      counts.add(host.name + " " + n);
    }
    if (most <= limit) {
      overLimitWithNoNodeOver++;
      text.add(counts + " (no node counts more than " + limit + ")");
    } else {
      text.add(counts.toString());
    }
    return text.toString();
  }

  /** Every permit still valid by its holder's deadline must sit on a quorum of nodes. */
  void audit() {
    for (Map.Entry<String, Map<String, Held>> r : live.entrySet()) {
      for (Map.Entry<String, Held> h : r.getValue().entrySet()) {
        if (h.getValue().until > loop.now()) {
          int holding = holding(r.getKey(), h.getKey(), h.getValue().grantedAt);
          if (holding < quorum) {
            base.violation(r.getKey() + ": permit " + h.getValue().permit + " of " + SimChecker.tag(h.getKey())
                + " is valid but held by " + holding + " nodes, quorum " + quorum);
          }
        }
      }
    }
  }

  /**
   * Nodes holding the token's permit, counting as holding a node restarted, or whose clock
   * stepped, since {@code since}.
   */
  private int holding(String resource, String token, long since) {
    int n = 0;
    for (SimHost host : hosts) {
      if (host.lastRestartNanos() >= since || host.lastStepNanos() >= since
          || (semaphore.votes(host) && semaphore.holdersOn(host, resource).contains(token))) {
        n++;
      }
    }
    return n;
  }

  long full() {
    return full;
  }

  long grants() {
    return grants;
  }

  /** At the end, with faults healed and every client gone: no permit of a token that was given back. */
  void leftBehind(java.util.Set<String> excused) {
    for (SimHost host : hosts) {
      for (String resource : limits.keySet()) {
        for (String token : semaphore.holdersOn(host, resource)) {
          if (!excused.contains(token)) {
            base.violation(host.name + ": a permit of " + resource + " left behind by " + SimChecker.tag(token));
          }
        }
      }
    }
  }

  /** How many bound violations had every node at or under the limit: the naive design's flaw, not a lost count. */
  long overLimitWithNoNodeOver() {
    return overLimitWithNoNodeOver;
  }
}
