package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import dev.redlockd.it.support.BlackholeProxy;
import dev.redlockd.it.support.FreePort;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.RespClient;
import dev.redlockd.testing.Scrape;
import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Issue 40's measurement: how long after the replica carrying a kept lease (ttl 3 s) and a
 * leadership goes silent each language's client resumes them through the other replica. Two
 * replicas over 5 Redis nodes; each round, one runner of the {@code replica-silent} scenario;
 * at its {@code kept}, the replica whose metrics show the runner's KeepAlive stream is frozen
 * (SIGSTOP, {@code -Dsilent.fault=stop}) or cut off by the proxy in front of it, which stops
 * forwarding and closes nothing ({@code -Dsilent.fault=blackhole}). The resume is read on the
 * Redis nodes: the first renewal of the lease's key (and of the election's, when the same
 * replica carried the leadership) after the fault. Also the runner's losses, fencing token and
 * term.
 *
 * <p>Not part of the suite (its name ends in neither Test nor IT); a quiet machine's figures only:
 * {@code mvn -B -pl integration-tests -am verify -Dit.test=SilentReplicaRun -Dtest=NONE
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false
 * -Dconformance.languages=java,go -Dsilent.fault=stop -Dsilent.rounds=5} (every client's check
 * script runs first, as for the suite; {@code -Dsilent.build=false} takes the runners as they were
 * last built; {@code -Dsilent.scenario=replica-restart}, the same steps, for runners from before
 * issue 40, to measure the clients as they were).
 */
class SilentReplicaRun {
  private static final int ROUNDS = Integer.getInteger("silent.rounds", 5);
  private static final String FAULT = System.getProperty("silent.fault", "stop");
  /** The runners' scenario: replica-restart's steps are the same, for runners older than replica-silent. */
  private static final String SCENARIO = System.getProperty("silent.scenario", "replica-silent");
  /** The scenario's ttl: past it without a renewal, the key has run out. */
  private static final Duration TTL = Duration.ofSeconds(3);
  /** A renewal sets the key's PTTL back to about the ttl: a rise of more than this is one. */
  private static final long RENEWED_MS = 50;

  @Test
  void resumeTimeAfterTheReplicaCarryingTheStreamsGoesSilent() throws Exception {
    assertThat(FAULT).isIn("stop", "blackhole");
    String only = System.getProperty("conformance.languages", "");
    List<Language> languages = Stream.of(Language.values())
        .filter(l -> only.isBlank() || List.of(only.split(",")).contains(l.id)).toList();
    if (!"false".equals(System.getProperty("silent.build"))) {
      languages.forEach(ClientBuilds::assumeBuilt); // -Dsilent.build=false: the runners as they were built last
    }
    List<String> report = new ArrayList<>();
    try (RedisCluster cluster = RedisCluster.start(5)) {
      int[] metrics = {FreePort.pick(), FreePort.pick()};
      List<ServerProcess> replicas = new ArrayList<>();
      try {
        for (int i = 0; i < 2; i++) {
          replicas.add(ServerProcess.start(List.of(), List.of("--redis", cluster.redisFlag(),
              "--metrics-port", Integer.toString(metrics[i])), Map.of()));
        }
        for (Language language : languages) {
          List<Long> leaseResumes = new ArrayList<>();
          List<Long> leaderResumes = new ArrayList<>();
          int losses = 0;
          for (int round = 1; round <= ROUNDS; round++) {
            Round r = round(language, round, cluster, replicas, metrics);
            report.add(language.id + " round " + round + ": " + r);
            System.out.println("silent replica (" + FAULT + "): " + report.get(report.size() - 1));
            if (r.leaseResumeMs >= 0) {
              leaseResumes.add(r.leaseResumeMs);
            }
            if (r.leaderResumeMs >= 0) {
              leaderResumes.add(r.leaderResumeMs);
            }
            losses += r.losses;
          }
          String summary = String.format("%s, %s, %d rounds: lease resumed after %s ms, leadership after %s ms "
              + "(those the same replica carried), losses %d", language.id, FAULT, ROUNDS, figures(leaseResumes),
              figures(leaderResumes), losses);
          report.add(summary);
          System.out.println("silent replica: " + summary);
        }
      } finally {
        for (ServerProcess replica : replicas) {
          replica.thaw();
          replica.close();
        }
      }
    }
    System.out.println("silent replica: all rounds\n" + String.join("\n", report));
  }

  /** What one round measured: resume times in ms (-1: not measured, or never resumed), losses. */
  private record Round(long leaseResumeMs, long leaderResumeMs, int losses, String facts) {
    @Override
    public String toString() {
      return "lease resumed after " + (leaseResumeMs < 0 ? "-" : leaseResumeMs + " ms") + ", leadership after "
          + (leaderResumeMs < 0 ? "- (another replica, or never)" : leaderResumeMs + " ms") + ", losses " + losses
          + "; " + facts;
    }
  }

  private static Round round(Language language, int round, RedisCluster cluster, List<ServerProcess> replicas,
      int[] metrics) throws Exception {
    String resource = "silent/" + language.id + "/" + round;
    List<BlackholeProxy> proxies = new ArrayList<>();
    try {
      String servers;
      if (FAULT.equals("blackhole")) {
        for (ServerProcess replica : replicas) {
          proxies.add(new BlackholeProxy(replica.port()));
        }
        servers = proxies.stream().map(p -> "127.0.0.1:" + p.port()).collect(Collectors.joining(","));
      } else {
        servers = replicas.stream().map(s -> "127.0.0.1:" + s.port()).collect(Collectors.joining(","));
      }
      List<String> command = new ArrayList<>(language.runner(Runtimes.repositoryRoot()));
      command.addAll(List.of("--server", servers, "--scenario", SCENARIO, "--resource", resource));
      try (RunnerProcess runner = RunnerProcess.start(command, Runtimes.repositoryRoot());
          Keys keys = new Keys(cluster, "redlock:{" + resource + "}:lock", "redlock:election:{" + resource + "}:lock")) {
        runner.expectAwait("kept", Duration.ofMinutes(1));
        int leaseOn = carrying(metrics, OpenStreams.KEEP_ALIVE, runner);
        boolean leaderThere = OpenStreams.count(metrics[leaseOn], OpenStreams.CAMPAIGN) > 0;
        keys.sample();
        long fault = System.nanoTime();
        if (FAULT.equals("blackhole")) {
          proxies.get(leaseOn).blackhole();
        } else {
          replicas.get(leaseOn).freeze();
        }
        // A renewal the silent replica had under way at the fault may land after it: a renewal
        // counts as the resume only once the other replica carries the stream it came through.
        int other = 1 - leaseOn;
        long[] renewed = keys.firstRenewalsAfter(fault, TTL.plusSeconds(1), List.of(
            () -> OpenStreams.count(metrics[other], OpenStreams.KEEP_ALIVE) > 0,
            () -> !leaderThere || OpenStreams.count(metrics[other], OpenStreams.CAMPAIGN) > 0));
        if (FAULT.equals("stop")) {
          replicas.get(leaseOn).thaw();
        }
        runner.answer();
        JsonObject result = runner.result(Duration.ofMinutes(1));
        int losses = result.get("lease_lost_calls").getAsInt() + result.get("leadership_lost_calls").getAsInt();
        String facts = "fencing token " + (result.get("fencing_token").equals(result.get("fencing_token_after"))
            ? "kept" : "CHANGED") + ", term " + (result.get("term").equals(result.get("term_after")) ? "kept" : "CHANGED")
            + ", valid " + result.get("valid") + ", leading " + result.get("is_leader");
        return new Round(ms(renewed[0], fault), leaderThere ? ms(renewed[1], fault) : -1, losses, facts);
      }
    } finally {
      for (BlackholeProxy proxy : proxies) {
        proxy.close();
      }
    }
  }

  /** The replica whose metrics show the KeepAlive stream open (the round's runner is the only client). */
  private static int carrying(int[] metrics, String kind, RunnerProcess runner) throws InterruptedException {
    int i = OpenStreams.carrying(List.of(metrics[0], metrics[1]), kind, Duration.ofSeconds(5));
    if (i < 0) {
      throw new AssertionError("no replica carries the " + kind + " stream:\n" + Scrape.of(metrics[0]).text() + "\n"
          + Scrape.of(metrics[1]).text() + "\n" + runner.transcript());
    }
    return i;
  }

  private static long ms(long atNanos, long sinceNanos) {
    return atNanos < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(atNanos - sinceNanos);
  }

  private static String figures(List<Long> values) {
    if (values.isEmpty()) {
      return "-";
    }
    List<Long> sorted = values.stream().sorted().toList();
    return "median " + sorted.get(sorted.size() / 2) + ", max " + sorted.get(sorted.size() - 1);
  }

  /** The lease's and the election's keys on every node, read by PTTL over connections kept open. */
  private static final class Keys implements AutoCloseable {
    private final List<RespClient> nodes = new ArrayList<>();
    private final String[] keys;
    /** Per key, the longest PTTL on any node at the last sample. */
    private final long[] longest;

    Keys(RedisCluster cluster, String... keys) throws IOException {
      for (String uri : cluster.uris()) {
        nodes.add(new RespClient("127.0.0.1", Integer.parseInt(uri.substring(uri.lastIndexOf(':') + 1))));
      }
      this.keys = keys;
      this.longest = new long[keys.length];
    }

    /** Reads every key's PTTL; true for each key whose longest PTTL rose since the last sample. */
    boolean[] sample() throws IOException {
      boolean[] rose = new boolean[keys.length];
      for (int k = 0; k < keys.length; k++) {
        long now = -2;
        for (RespClient node : nodes) {
          now = Math.max(now, (Long) node.call("PTTL", keys[k]));
        }
        rose[k] = now > longest[k] + RENEWED_MS;
        longest[k] = now;
      }
      return rose;
    }

    /**
     * When each key was first seen renewed after {@code fault} while its {@code resumed} check held
     * (read at the renewal), or -1 when not within {@code atMost}.
     */
    long[] firstRenewalsAfter(long fault, Duration atMost, List<BooleanSupplier> resumed)
        throws IOException, InterruptedException {
      long[] at = new long[keys.length];
      java.util.Arrays.fill(at, -1);
      long until = fault + atMost.toNanos();
      while (System.nanoTime() < until && java.util.Arrays.stream(at).anyMatch(t -> t < 0)) {
        boolean[] rose = sample();
        long now = System.nanoTime();
        for (int k = 0; k < keys.length; k++) {
          if (rose[k] && at[k] < 0 && resumed.get(k).getAsBoolean()) {
            at[k] = now;
          }
        }
        Thread.sleep(5);
      }
      return at;
    }

    @Override
    public void close() throws IOException {
      for (RespClient node : nodes) {
        node.close();
      }
    }
  }
}
