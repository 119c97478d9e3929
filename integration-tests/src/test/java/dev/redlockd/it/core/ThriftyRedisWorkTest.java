package dev.redlockd.it.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * What a lock cycle (Acquire of a free lock, then Release) costs the Redis nodes, counted from
 * each node's {@code INFO commandstats} rather than timed: a count does not depend on how loaded
 * the machine is. Cycles run as LockCycleBench runs them (one resource per slot, a fresh token
 * each cycle, many in flight) through the real server on five real nodes. Every-node rounds run
 * both scripts on all five nodes; thrifty rounds on a healthy cluster on a quorum of three only,
 * so a thrifty cycle costs the nodes 3/5 of the scripts, whichever node each key prefers, on a
 * resource locked before and on a new one alike (the round's floor gives a new resource the same
 * first fence on every node it asks: nothing to raise).
 */
class ThriftyRedisWorkTest {
  private static final int NODES = 5;
  private static final int QUORUM = NODES / 2 + 1;
  /** acquire.lua, then release.lua. */
  private static final int SCRIPTS_PER_CYCLE = 2;
  private static final int CYCLES = 1500;
  private static final int FRESH_CYCLES = 500;
  private static final int IN_FLIGHT = 32;
  /**
   * Scripts the nodes run that no cycle asked for: the monitor's probe.lua, one per node per
   * probe round, which come every 500 ms and, after a surprising reply, at most every 100 ms
   * (NodeMonitor's MIN_GAP_NANOS). A run of {@code t} seconds has at most t / 0.1 + 2 of them.
   */
  private static final double PROBE_GAP_SECONDS = 0.1;

  @Test
  void aThriftyCycleRunsItsScriptsOnAQuorumOfNodesOnlyAndEveryNodeCycleOnAll() throws Exception {
    Work[] everyNode = measure();
    Work[] thrifty = measure("--thrifty-rounds");
    System.out.printf(Locale.ROOT, "script calls per lock cycle, all %d nodes together, a resource locked before "
        + "(its counter alive): every node %.3f, thrifty %.3f (%.2fx); per node every node %s, thrifty %s%n", NODES,
        everyNode[0].perCycle(), thrifty[0].perCycle(), thrifty[0].perCycle() / everyNode[0].perCycle(),
        everyNode[0].perNodeText(), thrifty[0].perNodeText());
    System.out.printf(Locale.ROOT, "script calls per lock cycle, a resource never locked before: every node %.3f, "
        + "thrifty %.3f (%.2fx)%n", everyNode[1].perCycle(), thrifty[1].perCycle(),
        thrifty[1].perCycle() / everyNode[1].perCycle());

    assertThat(everyNode[0].perCycle()).as("every-node rounds: both scripts on every node")
        .isBetween((double) NODES * SCRIPTS_PER_CYCLE, NODES * SCRIPTS_PER_CYCLE + everyNode[0].slackPerCycle());
    assertThat(thrifty[0].perCycle()).as("thrifty rounds on a healthy cluster: both scripts on a quorum only")
        .isBetween((double) QUORUM * SCRIPTS_PER_CYCLE, QUORUM * SCRIPTS_PER_CYCLE + thrifty[0].slackPerCycle());
    // Every node saw every grant, so a new resource's first fence (each node's fence-max + 1) is
    // the same on all of them and nothing is raised.
    assertThat(everyNode[1].perCycle()).as("every-node rounds, new resources")
        .isBetween((double) NODES * SCRIPTS_PER_CYCLE, NODES * SCRIPTS_PER_CYCLE + everyNode[1].slackPerCycle());
    // Each node saw only its share of the grants, so without the round's floor a new resource's
    // first fences differ and the grant raises (raise.lua) the lower ones (7.72 per cycle
    // counted). With it they agree; two rounds that reach a node in the other order (sent on two
    // connections) may still differ there, so up to q - 1 raises per cycle are allowed.
    assertThat(thrifty[1].perCycle()).as("thrifty rounds, new resources: a quorum, and the raise of its laggards")
        .isBetween((double) QUORUM * SCRIPTS_PER_CYCLE,
            QUORUM * SCRIPTS_PER_CYCLE + (QUORUM - 1) + thrifty[1].slackPerCycle());
  }

  /** Script calls (EVALSHA and EVAL) per node over {@code cycles} cycles, and the seconds they took. */
  private record Work(long[] perNode, int cycles, double seconds) {
    double perCycle() {
      long sum = 0;
      for (long n : perNode) {
        sum += n;
      }
      return sum / (double) cycles;
    }

    /** The most probe rounds the run's time allows, on every node, per cycle. */
    double slackPerCycle() {
      return NODES * (seconds / PROBE_GAP_SECONDS + 2) / cycles;
    }

    String perNodeText() {
      StringBuilder text = new StringBuilder();
      for (long n : perNode) {
        text.append(text.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.2f", n / (double) cycles));
      }
      return text.toString();
    }
  }

  /**
   * Cycles on resources locked before, whose counters are alive (as the bench's slots, each
   * reusing its resource), then {@link #FRESH_CYCLES} cycles on resources never locked before.
   */
  private static Work[] measure(String... flags) throws Exception {
    // A node timeout (a loaded machine's, at 50 ms) widens a thrifty round to one node more: the
    // claim is what a healthy cluster's cycle costs, so no call here should time out.
    List<String> all = new ArrayList<>(List.of("--node-timeout", "1s"));
    all.addAll(List.of(flags));
    try (LiveServer h = new LiveServer(NODES, all.toArray(String[]::new))) {
      // Every connection has sent each script whole once (EVAL), the monitor has probed, and
      // each slot's resource has its counter.
      IntFunction<Supplier<String>> slots = slot -> () -> "work-slot-" + slot;
      run(h.async(), slots, 2 * IN_FLIGHT);
      Work reused = counted(h, () -> run(h.async(), slots, CYCLES), CYCLES);
      AtomicInteger names = new AtomicInteger();
      Work fresh = counted(h, () -> run(h.async(), slot -> () -> "work-new-" + names.incrementAndGet(),
          FRESH_CYCLES), FRESH_CYCLES);
      return new Work[] {reused, fresh};
    }
  }

  private interface Cycles {
    void run() throws Exception;
  }

  private static Work counted(LiveServer h, Cycles cycles, int count) throws Exception {
    long[] before = scriptCalls(h.cluster());
    long start = System.nanoTime();
    cycles.run();
    double seconds = (System.nanoTime() - start) / 1e9;
    long[] after = scriptCalls(h.cluster());
    long[] ran = new long[NODES];
    for (int n = 0; n < NODES; n++) {
      ran[n] = after[n] - before[n];
    }
    return new Work(ran, count, seconds);
  }

  /** {@code cycles} cycles, {@link #IN_FLIGHT} at a time; each slot's cycles lock the resources it names. */
  private static void run(LockServiceGrpc.LockServiceStub stub, IntFunction<Supplier<String>> resources, int cycles)
      throws Exception {
    AtomicInteger left = new AtomicInteger(cycles);
    List<CompletableFuture<Void>> slots = new ArrayList<>();
    for (int s = 0; s < IN_FLIGHT; s++) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      slots.add(done);
      cycle(stub, resources.apply(s), left, done);
    }
    CompletableFuture.allOf(slots.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
  }

  private static void cycle(LockServiceGrpc.LockServiceStub stub, Supplier<String> resources, AtomicInteger left,
      CompletableFuture<Void> done) {
    if (left.getAndDecrement() <= 0) {
      done.complete(null);
      return;
    }
    String resource = resources.get();
    String token = UUID.randomUUID().toString();
    stub.acquire(AcquireRequest.newBuilder().setResource(resource).setToken(token)
        .setTtl(LiveServer.proto(Duration.ofSeconds(10))).build(), new Answer<>(done, granted ->
        stub.release(ReleaseRequest.newBuilder().setResource(resource).setToken(token).build(),
            new Answer<>(done, released -> {
              if (!released.getReleased()) {
                done.completeExceptionally(new AssertionError("Release answered released=false on " + resource));
                return;
              }
              cycle(stub, resources, left, done);
            }))));
  }

  /** A unary call's answer handed on; its error fails the slot. */
  private record Answer<T>(CompletableFuture<Void> done, Consumer<T> next) implements StreamObserver<T> {
    @Override
    public void onNext(T value) {
      next.accept(value);
    }

    @Override
    public void onError(Throwable t) {
      done.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {}
  }

  /** EVALSHA plus EVAL calls each node has run so far (a script sent whole the first time runs as EVAL). */
  private static long[] scriptCalls(RedisCluster cluster) {
    long[] calls = new long[cluster.size()];
    for (int n = 0; n < cluster.size(); n++) {
      String stats = (String) cluster.call(n, "INFO", "commandstats");
      calls[n] = stats.lines()
          .filter(line -> line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
          .mapToLong(line -> Long.parseLong(line.replaceAll("^[^:]*:calls=(\\d+),.*", "$1")))
          .sum();
    }
    return calls;
  }
}
