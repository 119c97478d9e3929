package dev.redlockd.sim;

import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.LimitExceededException;
import dev.redlockd.engine.LockHeldException;
import dev.redlockd.engine.QuorumUnavailableException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * Watches a simulation for what must never happen: two holders valid at once by their own
 * deadlines, a fencing token not above every earlier lease's, a grant or a valid lease without
 * a quorum of voting nodes holding it, a failure outside the contract, a lock left behind.
 * Keeps the last events as a trace for the first violation.
 */
final class SimChecker {
  private static final int TRACE = 1500;

  private final SimLoop loop;
  private final List<SimHost> hosts;
  private final int quorum;
  private final String prefix;
  private final List<String> violations = new ArrayList<>();
  /** The last events, formatted only when a violation needs them (formatting every event cost most of a run). */
  private final ArrayDeque<Traced> trace = new ArrayDeque<>();
  private String firstTrace;
  /** Per resource: each holder's token and the end of its validity by its own deadline. */
  private final Map<String, Map<String, Held>> live = new HashMap<>();
  /** Per resource: the highest fencing token reported and its token, and the highest of any other token. */
  private final Map<String, Fences> fences = new HashMap<>();
  /** Tokens whose locks may legitimately outlive the run: their holder vanished, or a delete was lost. */
  private final Set<String> excused = new HashSet<>();

  private static final class Held {
    final long grantedAt;
    long until;

    Held(long grantedAt, long until) {
      this.grantedAt = grantedAt;
      this.until = until;
    }
  }

  static final class Fences {
    String bestToken;
    long best = Long.MIN_VALUE;
    long other = Long.MIN_VALUE;

    long aboveAllBut(String token) {
      return token.equals(bestToken) ? other : best;
    }

    void report(String token, long fence) {
      if (token.equals(bestToken)) {
        best = Math.max(best, fence);
      } else if (fence > best) {
        other = best;
        best = fence;
        bestToken = token;
      } else {
        other = Math.max(other, fence);
      }
    }
  }

  SimChecker(SimLoop loop, List<SimHost> hosts, String prefix) {
    this(loop, hosts, prefix, hosts.size());
  }

  /** {@code setSize}: how many nodes each resource lives on, of which a lease must hold a majority. */
  SimChecker(SimLoop loop, List<SimHost> hosts, String prefix, int setSize) {
    this.loop = loop;
    this.hosts = hosts;
    this.quorum = setSize / 2 + 1;
    this.prefix = prefix;
  }

  private record Traced(long at, Supplier<String> what) {
    @Override
    public String toString() {
      return String.format("%12.6f ms  %s", at / 1e6, what.get());
    }
  }

  void event(String what) {
    event(() -> what);
  }

  void event(Supplier<String> what) {
    if (trace.size() == TRACE) {
      trace.poll();
    }
    trace.add(new Traced(loop.now(), what));
  }

  void violation(String what) {
    event("VIOLATION " + what);
    violations.add(String.format("at %.6f ms: %s", loop.now() / 1e6, what));
    if (firstTrace == null) {
      firstTrace = trace.stream().map(Traced::toString).collect(java.util.stream.Collectors.joining("\n"));
    }
  }

  /** A holder learnt of its grant: valid until the attempt's send time plus the validity. */
  void granted(String client, String resource, String token, long sentAt, long validityNanos, long fence) {
    long until = sentAt + validityNanos;
    event(() -> client + " granted " + resource + " " + tag(token) + " fence " + fence + " valid to "
        + String.format("%.3f", until / 1e6));
    Fences f = fences.computeIfAbsent(resource, r -> new Fences());
    long above = f.aboveAllBut(token);
    if (fence <= above) {
      violation(resource + ": fencing token " + fence + " granted to " + tag(token) + " is not above "
          + above + ", already reported to another lease");
    }
    f.report(token, fence);
    overlap(resource, token, until);
    int holding = holding(resource, token, sentAt);
    if (holding < quorum) {
      violation(resource + ": granted to " + tag(token) + " held by " + holding + " voting nodes, quorum " + quorum);
    }
    Map<String, Held> holders = live.computeIfAbsent(resource, r -> new HashMap<>());
    Held held = holders.get(token);
    if (held == null) {
      holders.put(token, new Held(sentAt, until));
    } else {
      held.until = Math.max(held.until, until);
    }
  }

  /** A renewal moved the holder's deadline (renewals only ever move it forward). */
  void renewed(String client, String resource, String token, long until, long fence) {
    Held held = live.getOrDefault(resource, Map.of()).get(token);
    if (held == null || until <= held.until) {
      return;
    }
    event(() -> client + " renewed " + resource + " " + tag(token) + " fence " + fence + " valid to "
        + String.format("%.3f", until / 1e6));
    fences.computeIfAbsent(resource, r -> new Fences()).report(token, fence);
    overlap(resource, token, until);
    held.until = until;
  }

  private void overlap(String resource, String token, long until) {
    if (until <= loop.now()) {
      return;
    }
    for (Map.Entry<String, Held> other : live.getOrDefault(resource, Map.of()).entrySet()) {
      if (!other.getKey().equals(token) && other.getValue().until > loop.now()) {
        violation(resource + ": " + tag(token) + " valid while " + tag(other.getKey()) + " is valid until "
            + String.format("%.3f ms", other.getValue().until / 1e6));
      }
    }
  }

  /** The holder stopped using the lease (it sent a release, lost it, or vanished). */
  void ended(String client, String resource, String token) {
    event(() -> client + " ends " + resource + " " + tag(token));
    Map<String, Held> holders = live.get(resource);
    if (holders != null) {
      holders.remove(token);
    }
  }

  void excuse(String token) {
    excused.add(token);
  }

  Set<String> excused() {
    return excused;
  }

  /** A failure an engine call completed with: only the contract's kinds are allowed. */
  void failed(String client, String what, Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    Throwable failed = cause;
    event(() -> client + " " + what + " failed: " + failed.getClass().getSimpleName());
    if (!(cause instanceof LockHeldException || cause instanceof QuorumUnavailableException
        || cause instanceof LeaseNotHeldException || cause instanceof LimitExceededException
        || cause instanceof CancellationException)) {
      violation(client + " " + what + " failed outside the contract: " + cause);
    }
  }

  void crashed(Throwable t) {
    violation("an engine task threw: " + t);
  }

  /** Every lease still valid by its holder's deadline must sit on a quorum of voting nodes. */
  void audit() {
    for (Map.Entry<String, Map<String, Held>> r : live.entrySet()) {
      for (Map.Entry<String, Held> h : r.getValue().entrySet()) {
        if (h.getValue().until > loop.now()) {
          int holding = holding(r.getKey(), h.getKey(), h.getValue().grantedAt);
          if (holding < quorum) {
            violation(r.getKey() + ": " + tag(h.getKey()) + " is valid but held by " + holding
                + " voting nodes, quorum " + quorum);
          }
        }
      }
    }
  }

  /**
   * Voting nodes holding the lease, counting as holding a node restarted, or whose clock stepped,
   * since {@code since}: either may have lost the lease there, and is quarantined for it, so the
   * check that matters is that no other holder is valid meanwhile.
   */
  private int holding(String resource, String token, long since) {
    int n = 0;
    for (SimHost host : hosts) {
      if (host.lastRestartNanos() >= since || host.lastStepNanos() >= since) {
        n++;
        continue;
      }
      SimKeyspace keys = host.redis.keyspace();
      if (token.equals(holder(keys.execute("GET", prefix + "{" + resource + "}:lock")))
          && Long.valueOf(1).equals(keys.execute("EXISTS", prefix + "node:incarnation"))) {
        n++;
      }
    }
    return n;
  }

  /** At the end, with faults healed and every client gone: no lock of a token that was given back. */
  void leftBehind() {
    for (SimHost host : hosts) {
      SimKeyspace keys = host.redis.keyspace();
      for (String key : keys.keys()) {
        if (key.endsWith(":lock")) {
          String token = holder(keys.execute("GET", key));
          if (token != null && !excused.contains(token)) {
            violation(host.name + ": " + key + " left behind by " + tag(token));
          }
        }
      }
    }
  }

  /** The token in a lock's value (the token, then round ids after a space). */
  private static String holder(Object value) {
    if (value == null) {
      return null;
    }
    String text = value.toString();
    int space = text.indexOf(' ');
    return space < 0 ? text : text.substring(0, space);
  }

  List<String> violations() {
    return violations;
  }

  String firstTrace() {
    return firstTrace;
  }

  /** Tokens are secrets in production; in a trace a short tag is enough to tell them apart. */
  static String tag(String token) {
    return "#" + Integer.toHexString(token.hashCode() & 0xffff);
  }
}
