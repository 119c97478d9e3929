package dev.redlockd.it.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import dev.redlockd.server.ServerConfig;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.RespClient;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The rolling-restart run (docs/reliability.md): 3 replicas over 5 Redis nodes, every
 * language's client holding its share of 2,000 kept leases and 50 leaderships (ttl 10 s)
 * through all three replicas, while every replica is restarted in turn, twice with SIGTERM and
 * once more with SIGKILL, each time until it listens again. Expected: no lease lost, no
 * leadership changed, no key ever held by another token, fencing tokens and terms unchanged.
 *
 * <p>Paced by readiness ({@code -Drolling.readiness-paced=true}), each restart begins as soon as
 * the replica restarted before it serves again, as an orchestrator that waits for readiness rolls
 * a deployment: no settling time between restarts, and the keys are checked once, after the last.
 * {@code -Drolling.ttl-ms} sets the ttl of every lease and leadership (hold-many's
 * {@code --ttl-ms}); issue 40's case is a ttl of 3 s, paced by readiness. The replicas warm up as
 * the server does by default ({@code --warm-up}), which the suite's environment turns off for its
 * other servers; {@code -Drolling.warm-up=0} shows what a replica that listens cold does.
 *
 * <p>Not part of the suite (its name ends in neither Test nor IT; a few minutes); run it with
 * {@code mvn -B -pl integration-tests -am verify -Dit.test=RollingRestartRun -Dtest=NONE
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false}
 * ({@code -Drolling.leases}, {@code -Drolling.elections} and {@code -Dconformance.languages}
 * change the load).
 */
@NeedsClientBuilds
class RollingRestartRun {
  private static final int LEASES = Integer.getInteger("rolling.leases", 2_000);
  private static final int ELECTIONS = Integer.getInteger("rolling.elections", 50);
  /** The ttl of every lease and leadership: hold-many's own (10 s) unless set. */
  private static final Duration TTL = Duration.ofMillis(Long.getLong("rolling.ttl-ms", 10_000));
  /** Each restart as soon as the previous replica serves, as an orchestrator waiting for readiness does. */
  private static final boolean READINESS_PACED = Boolean.getBoolean("rolling.readiness-paced");
  /**
   * Scratch leases each replica runs before it listens ({@code -Drolling.warm-up}): the server's
   * own default unless set, which the suite's environment turns off for its other servers.
   */
  private static final int WARM_UP = Integer.getInteger("rolling.warm-up", ServerConfig.WARM_UP_DEFAULT);
  /** Keys read with one MGET. */
  private static final int READ_BATCH = 500;
  /** Time for the clients to resume and renew through the replicas left before the next restart. */
  private static final Duration SETTLE = Duration.ofSeconds(2);
  /**
   * How often, paced by readiness, where the KeepAlive streams are is sampled ({@link StreamTimeline}),
   * 0 for never ({@code -Drolling.timeline-ms}). Each sample scrapes every replica's /metrics: 3-6 ms
   * of a loaded replica's CPU, and the harness's own HTTP, parsing and compiling besides. Every 200 ms
   * that came to 0.15-0.2 of the run's 2 cores while replicas restarted, taken from the very
   * renewals the run measures (a Prometheus server scrapes every 15 s).
   */
  private static final Duration TIMELINE_INTERVAL = Duration.ofMillis(Long.getLong("rolling.timeline-ms", 1_000));
  /** How long the held leases are watched before the first restart, for the CPU they cost alone. */
  private static final Duration STEADY = Duration.ofSeconds(5);

  @Test
  void everyKeptLeaseAndLeadershipOutlivesEveryReplicaRestart() throws Exception {
    String only = System.getProperty("conformance.languages", "");
    List<Language> languages = Stream.of(Language.values())
        .filter(l -> only.isBlank() || List.of(only.split(",")).contains(l.id)).toList();
    languages.forEach(ClientBuilds::assumeBuilt);
    long began = System.nanoTime();
    try (RedisCluster cluster = RedisCluster.start(5);
        ReplicaSet replicas = ReplicaSet.start(3, cluster.redisFlag(),
            List.of("--warm-up", Integer.toString(WARM_UP)))) {
      List<RunnerProcess> runners = new ArrayList<>();
      Map<String, String> keys = new LinkedHashMap<>(); // lock and election keys, each named for the report
      StreamTimeline timeline = null;
      try {
        for (int i = 0; i < languages.size(); i++) {
          Language language = languages.get(i);
          int leases = share(LEASES, languages.size(), i);
          int elections = share(ELECTIONS, languages.size(), i);
          String resource = "rolling/" + language.id;
          List<String> command = new ArrayList<>(language.runner(Runtimes.repositoryRoot()));
          command.addAll(List.of("--server", replicas.addresses(), "--scenario", "hold-many",
              "--resource", resource, "--count", Integer.toString(leases), "--elections", Integer.toString(elections)));
          if (!TTL.equals(Duration.ofSeconds(10))) {
            command.addAll(List.of("--ttl-ms", Long.toString(TTL.toMillis())));
          }
          runners.add(RunnerProcess.start(command, Runtimes.repositoryRoot()));
          for (int k = 0; k < leases; k++) {
            keys.put(language.id + " lease " + k, "redlock:{" + resource + "/" + k + "}:lock");
          }
          for (int k = 0; k < elections; k++) {
            keys.put(language.id + " election " + k, "redlock:election:{" + resource + "/e" + k + "}:lock");
          }
        }
        for (RunnerProcess runner : runners) {
          runner.expectAwait("held", Duration.ofMinutes(3));
        }
        long heldAt = System.nanoTime();
        long readFrom = System.nanoTime();
        Map<String, String> holders = holders(cluster, keys);
        String notHeld = notHeld(holders);
        System.out.println("rolling restart: keys read in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - readFrom)
            + " ms; not held by a quorum at the start: " + (notHeld.isEmpty() ? "none" : notHeld)
            + "; streams open on the replicas: " + streamsOpen(replicas) + " (one per lease and leadership: "
            + LEASES + " KeepAlive, " + ELECTIONS + " Campaign)");
        assertThat(notHeld).as("every lease and leadership held by a quorum at the start").isEmpty();

        CpuAccount steadyFrom = CpuAccount.now();
        Thread.sleep(STEADY.toMillis());
        CpuAccount restartsFrom = CpuAccount.now();
        System.out.println("rolling restart: CPU while the grants are kept, before any restart, "
            + restartsFrom.since(steadyFrom));
        List<String> restarts = new ArrayList<>();
        int changedHands = 0;
        timeline = READINESS_PACED && !TIMELINE_INTERVAL.isZero() ? new StreamTimeline(replicas, TIMELINE_INTERVAL) : null;
        for (String signal : List.of("SIGTERM", "SIGTERM", "SIGKILL")) {
          for (int i = 0; i < 3; i++) {
            String carried = keepAliveByReplica(replicas);
            long start = System.nanoTime();
            if (timeline != null) {
              timeline.mark(signal + " replica " + i);
            }
            replicas.restart(i, signal.equals("SIGKILL")).get(2, TimeUnit.MINUTES);
            long listening = System.nanoTime();
            if (READINESS_PACED) {
              if (timeline != null) {
                timeline.mark("replica " + i + " listens again");
              }
              restarts.add(String.format("%s replica %d (KeepAlive streams by replica %s): back in %d ms, "
                      + "having used %d ms of CPU to start", signal, i, carried,
                  TimeUnit.NANOSECONDS.toMillis(listening - start), startCpuMillis(replicas, i)));
              System.out.println("rolling restart: " + restarts.get(restarts.size() - 1));
              continue; // the next restart at once
            }
            Thread.sleep(SETTLE.toMillis());
            int changed = changedHands(holders, holders(cluster, keys));
            changedHands += changed;
            restarts.add(String.format("%s replica %d: back in %d ms; keys held by another token or by no quorum: %d",
                signal, i, TimeUnit.NANOSECONDS.toMillis(listening - start), changed));
            System.out.println("rolling restart: " + restarts.get(restarts.size() - 1));
          }
        }
        System.out.println("rolling restart: CPU during the restarts (a restarted replica's own CPU is gone with it), "
            + CpuAccount.now().since(restartsFrom));
        if (READINESS_PACED) {
          Thread.sleep(SETTLE.toMillis());
          if (timeline != null) {
            timeline.close();
            System.out.println("rolling restart: KeepAlive streams by replica, sampled every "
                + TIMELINE_INTERVAL.toMillis() + " ms (open; since its start: handed on, reader gone, superseded, "
                + "JEOPARDY answers, streams refused, node timeouts; nodes up):\n"
                + timeline.describe());
          }
          changedHands = changedHands(holders, holders(cluster, keys));
          System.out.println("rolling restart: after the last restart, keys held by another token or by no quorum: "
              + changedHands);
        }

        Map<String, Integer> totals = new HashMap<>();
        for (int i = 0; i < runners.size(); i++) {
          RunnerProcess runner = runners.get(i);
          runner.answer();
          JsonObject r = runner.result(Duration.ofMinutes(2));
          System.out.println("rolling restart: " + languages.get(i).id + ": " + r);
          for (String fact : List.of("leases", "leases_valid", "leases_lost", "fencing_changed", "leaderships",
              "leading", "leaderships_lost", "terms_changed", "released", "resigned")) {
            totals.merge(fact, r.get(fact).getAsInt(), Integer::sum);
          }
        }
        String figures = String.format("%d leases and %d leaderships (ttl %d ms) over %s, %d replica restarts%s "
                + "(warm-up %d scratch leases) in %d s: "
                + "leases lost %d, fencing tokens changed %d, leaderships lost %d, terms changed %d, "
                + "keys that changed hands or lost their quorum %d; released %d, resigned %d",
            totals.get("leases"), totals.get("leaderships"), TTL.toMillis(), languages, restarts.size(),
            READINESS_PACED ? " paced by readiness" : "", WARM_UP,
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - heldAt), totals.get("leases_lost"),
            totals.get("fencing_changed"), totals.get("leaderships_lost"), totals.get("terms_changed"),
            changedHands, totals.get("released"), totals.get("resigned"));
        System.out.println("rolling restart: " + figures + " (whole run " + TimeUnit.NANOSECONDS.toSeconds(
            System.nanoTime() - began) + " s)");

        assertThat(totals.get("leases")).isEqualTo(LEASES);
        assertThat(totals.get("leaderships")).isEqualTo(ELECTIONS);
        assertThat(changedHands).as("keys that changed hands: " + restarts).isZero();
        assertThat(totals.get("leases_lost")).as(figures).isZero();
        assertThat(totals.get("leases_valid")).as(figures).isEqualTo(LEASES);
        // Go's client reports the highest fencing token its renewals carried: unchanged, as in
        // every client, since a renewal reports the fence a quorum of the holders agree on.
        assertThat(totals.get("fencing_changed")).as(figures).isZero();
        assertThat(totals.get("leaderships_lost")).as(figures).isZero();
        assertThat(totals.get("leading")).as(figures).isEqualTo(ELECTIONS);
        assertThat(totals.get("terms_changed")).as(figures).isZero();
        assertThat(totals.get("released")).as(figures).isEqualTo(LEASES);
        assertThat(totals.get("resigned")).as(figures).isEqualTo(ELECTIONS);
      } catch (AssertionError | Exception e) {
        throw new AssertionError(e.getMessage() + "\n" + replicas.logs(), e);
      } finally {
        if (timeline != null) {
          timeline.close();
        }
        for (int i = 0; i < runners.size(); i++) {
          runners.get(i).close();
          keepTranscript(languages.get(i), runners.get(i));
        }
      }
    }
  }

  /**
   * Each runner's output, kept under target/rolling/ for a loss's story (a client's own log
   * lines, where its runner turns them on with REDLOCKD_RUNNER_LOG=debug).
   */
  private static void keepTranscript(Language language, RunnerProcess runner) {
    try {
      java.nio.file.Path dir = java.nio.file.Path.of("target", "rolling");
      java.nio.file.Files.createDirectories(dir);
      java.nio.file.Files.writeString(dir.resolve(language.id + ".log"), runner.transcript());
    } catch (IOException e) {
      System.out.println("rolling restart: " + language.id + "'s transcript not kept: " + e);
    }
  }

  /** The keys no quorum holds, counted by language and kind ("node lease 12, go election 1"), or "". */
  private static String notHeld(Map<String, String> holders) {
    Map<String, Integer> counts = new TreeMap<>();
    holders.forEach((name, token) -> {
      if (token == null) {
        counts.merge(name.substring(0, name.lastIndexOf(' ')), 1, Integer::sum);
      }
    });
    return counts.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
        .collect(Collectors.joining(", "));
  }

  /**
   * The kept streams the replicas have open, in all: more than one per grant means streams the
   * clients superseded for their silence and left open (those end after a ttl without a request).
   */
  private static String streamsOpen(ReplicaSet replicas) {
    long keepAlive = 0;
    long campaign = 0;
    for (int i = 0; i < replicas.size(); i++) {
      keepAlive += OpenStreams.count(replicas.metricsPort(i), OpenStreams.KEEP_ALIVE);
      campaign += OpenStreams.count(replicas.metricsPort(i), OpenStreams.CAMPAIGN);
    }
    return "KeepAlive " + keepAlive + ", Campaign " + campaign;
  }

  /**
   * The KeepAlive streams each replica has open, "[12, 480, 8]" ("-" for one that does not
   * answer): paced by readiness, the streams a restart moves go to the replicas the clients
   * reach at that moment, and one replica may come to carry nearly all of them, which its own
   * restart then moves at once (issue 40).
   */
  private static String keepAliveByReplica(ReplicaSet replicas) {
    List<String> counts = new ArrayList<>();
    for (int i = 0; i < replicas.size(); i++) {
      try {
        counts.add(Long.toString(OpenStreams.count(replicas.metricsPort(i), OpenStreams.KEEP_ALIVE)));
      } catch (RuntimeException down) {
        counts.add("-");
      }
    }
    return counts.toString();
  }

  /** The CPU replica {@code i}'s JVM has used since it started (-1 if not known). */
  private static long startCpuMillis(ReplicaSet replicas, int i) {
    return ProcessHandle.of(replicas.server(i).pid()).flatMap(p -> p.info().totalCpuDuration())
        .map(Duration::toMillis).orElse(-1L);
  }

  /** How many keys a quorum no longer holds under the token it held them with at the start. */
  private static int changedHands(Map<String, String> before, Map<String, String> now) {
    int changed = 0;
    for (Map.Entry<String, String> e : before.entrySet()) {
      if (!Objects.equals(e.getValue(), now.get(e.getKey()))) {
        changed++;
      }
    }
    return changed;
  }

  /** Item {@code i}'s part of {@code total} split over {@code parts}: the first ones take the remainder. */
  private static int share(int total, int parts, int i) {
    return total / parts + (i < total % parts ? 1 : 0);
  }

  /**
   * For each key, the token a quorum of nodes holds it with, or null when no quorum agrees. Read
   * with MGET, a batch at a time: a GET per key and node (10,250 round trips for the default load)
   * took long enough on a busy machine that the read itself was a question at a short ttl.
   */
  private static Map<String, String> holders(RedisCluster cluster, Map<String, String> keys) throws IOException {
    List<String> names = List.copyOf(keys.keySet());
    List<Map<String, String>> byNode = new ArrayList<>();
    for (String uri : cluster.uris()) {
      Map<String, String> tokens = new HashMap<>();
      try (RespClient node = new RespClient("127.0.0.1", Integer.parseInt(uri.substring(uri.lastIndexOf(':') + 1)))) {
        for (int from = 0; from < names.size(); from += READ_BATCH) {
          List<String> batch = names.subList(from, Math.min(names.size(), from + READ_BATCH));
          List<?> values = (List<?>) node.call(Stream.concat(Stream.of("MGET"), batch.stream().map(keys::get))
              .toArray(String[]::new));
          for (int k = 0; k < batch.size(); k++) {
            if (values.get(k) instanceof String s) {
              tokens.put(batch.get(k), s.split(" ", 2)[0]);
            }
          }
        }
      }
      byNode.add(tokens);
    }
    int quorum = byNode.size() / 2 + 1;
    Map<String, String> holders = new HashMap<>();
    for (String name : keys.keySet()) {
      Map<String, Integer> votes = new HashMap<>();
      for (Map<String, String> node : byNode) {
        String token = node.get(name);
        if (token != null) {
          votes.merge(token, 1, Integer::sum);
        }
      }
      holders.put(name, votes.entrySet().stream().filter(v -> v.getValue() >= quorum)
          .map(Map.Entry::getKey).findFirst().orElse(null));
    }
    return holders;
  }
}
