package dev.redlockd.it.ops;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.it.support.Resend;
import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.CampaignResponse;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ElectionServiceGrpc;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ObserveRequest;
import dev.redlockd.proto.v1.ObserveResponse;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The alert rules (ops/prometheus/alerts.yml) and the Grafana dashboard (ops/grafana/redlockd.json)
 * against the real thing: promtool checks and unit-tests the rules; then a real Prometheus
 * scrapes a real server process every second from its start while a small load runs (acquires, a
 * KeepAlive, a campaign, an observer, a refused call), and every alert expression and every panel
 * query is evaluated through its HTTP API. Each must name only metrics Prometheus has and labels
 * their series carry, and must return series where it should. The replica's cold start and first
 * load make no alert pending. Freezing Redis nodes (SIGSTOP) makes the quorum alerts go pending;
 * a copy of the rules on a clock 12 times faster ({@link ScaledRules}) fires during that fault,
 * and once the nodes are back its alerts stop firing within their bound, and no alert, real or
 * scaled, starts firing later.
 */
class PrometheusRulesTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path RULES = ROOT.resolve("ops/prometheus/alerts.yml");
  private static final Path RULE_TESTS = ROOT.resolve("ops/prometheus/alerts_test.yml");
  private static final Path DASHBOARD = ROOT.resolve("ops/grafana/redlockd.json");
  private static final Duration TTL = Duration.ofSeconds(3);
  /** The scaled copy's clock: its 1-minute rate windows last 5 s. */
  private static final int SCALE = 12;
  private static final Duration SCALED_WINDOW = Duration.ofMinutes(1).dividedBy(SCALE);
  /** Prometheus' scrape and evaluation interval (Prometheus.start). */
  private static final Duration INTERVAL = Duration.ofSeconds(1);
  private static final String POLICY = """
      {"version": 2, "identities": [
        {"identity": "load", "lock": [""], "describe": [""], "campaign": [""], "observe": [""]}
      ]}
      """;

  /** A metric name as PromQL names one here (all of redlockd's, Prometheus' own up and ALERTS), with its matchers. */
  private static final Pattern SELECTOR =
      Pattern.compile("\\b(redlockd_[a-z_]+|process_start_time_seconds|up|ALERTS)\\b(?:\\{([^}]*)})?");
  private static final Pattern ALERT_NAME = Pattern.compile("(?m)^\\s*- alert: (\\w+)$");
  private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)");
  private static final Pattern GROUPING =
      Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");

  @TempDir
  Path dir;

  @Test
  void promtoolAcceptsTheRulesAndTheirUnitTestsPass() throws Exception {
    assertThat(run(Prometheus.tool("promtool").toString(), "check", "rules", RULES.toString()))
        .contains("SUCCESS");
    assertThat(run(Prometheus.tool("promtool").toString(), "test", "rules", RULE_TESTS.toString()))
        .contains("SUCCESS");
  }

  @Test
  void everyQueryNamesRealMetricsAColdStartMakesNothingPendingAndNothingFiresOnceAFaultIsOver() throws Exception {
    Prometheus.tool("prometheus");
    Path scaled = ScaledRules.write(RULES, dir, SCALE);
    String token = "prometheus-rules-test-token-0123456789";
    Path policy = Files.writeString(dir.resolve("policy.json"), POLICY);
    Path tokens = Files.writeString(dir.resolve("tokens"), "load sha256:" + HexFormat.of().formatHex(
        MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8))) + "\n");
    int metricsPort = freePort();
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag(), "--node-timeout", "250ms",
            "--bind", "127.0.0.1", "--policy", policy.toString(), "--tokens", tokens.toString(),
            "--metrics-port", Integer.toString(metricsPort));
        // From the replica's first seconds: its cold start is what the first scrapes see.
        Prometheus prometheus = Prometheus.start(List.of(RULES, scaled), "redlockd", metricsPort)) {
      long scrapedSince = System.nanoTime();
      Channel channel = ClientInterceptors.intercept(server.channel(), bearer(token));
      // A deadline per call: one set here would run out before the test ends.
      Supplier<LockServiceGrpc.LockServiceBlockingStub> locks =
          () -> LockServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);

      // The load: acquires granted, released and refused as held; a kept lease, and one given back (its stream
      // ended OK); a candidate and an observer;
      // a call without a token, which the policy refuses.
      for (int i = 0; i < 5; i++) {
        Lease lease = locks.get().acquire(acquireRequest("prom/" + i, TTL, Duration.ZERO, "")).getLease();
        locks.get().release(
            ReleaseRequest.newBuilder().setResource(lease.getResource()).setToken(lease.getToken()).build());
      }
      Lease held =
          locks.get().acquire(acquireRequest("prom/held", Duration.ofSeconds(30), Duration.ZERO, "")).getLease();
      assertThat(codeOf(() -> locks.get().acquire(acquireRequest("prom/held", TTL, Duration.ZERO, ""))).getCode())
          .isEqualTo(Status.Code.ABORTED);
      Lease kept = locks.get().acquire(acquireRequest("prom/kept", TTL, Duration.ZERO, "")).getLease();
      KeptStream.keep(LockServiceGrpc.newStub(channel), "prom/kept", kept.getToken(), TTL);
      Lease given = locks.get().acquire(acquireRequest("prom/given-back", TTL, Duration.ZERO, "")).getLease();
      KeptStream givenBack = KeptStream.keep(LockServiceGrpc.newStub(channel), "prom/given-back", given.getToken(), TTL);
      givenBack.halfClose();
      assertThat(givenBack.awaitEnd(Duration.ofSeconds(10)).getCode()).isEqualTo(Status.Code.OK);
      ElectionServiceGrpc.ElectionServiceStub elections = ElectionServiceGrpc.newStub(channel);
      CompletableFuture<CampaignResponse> leading = new CompletableFuture<>();
      StreamObserver<CampaignRequest> campaign = elections.campaign(firstOf(leading));
      CampaignRequest leads = CampaignRequest.newBuilder().setElection("prom/leader").setValue("me")
          .setTtl(LiveServer.proto(TTL)).build();
      campaign.onNext(leads);
      // A leader asks every ttl/4, as the clients do: one silent for longer than its ttl is let go.
      Resend asking = Resend.everyQuarterOf(TTL, campaign, sequence -> leads.toBuilder().setSequence(sequence)
          .build(), 1, new CompletableFuture<>());
      CompletableFuture<ObserveResponse> observed = new CompletableFuture<>();
      elections.observe(ObserveRequest.newBuilder().setElection("prom/leader").build(), firstOf(observed));
      leading.get(10, TimeUnit.SECONDS);
      observed.get(10, TimeUnit.SECONDS);
      LockServiceGrpc.LockServiceBlockingStub anonymous =
          LockServiceGrpc.newBlockingStub(server.channel()).withDeadlineAfter(10, TimeUnit.SECONDS);
      assertThat(codeOf(() -> anonymous.describe(DescribeRequest.newBuilder().setResource("prom/x").build()))
          .getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);

      // Enough scrapes after the load for rate() to see it (two samples in the window), and renewals seen.
      await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500)).until(() ->
          !prometheus.query("rate(redlockd_kept_lease_renewals_total{stream=\"Campaign\",state=\"HELD\"}[1m]) > 0")
              .isEmpty()
          && !prometheus.query("rate(redlockd_access_denials_total[1m])").isEmpty()
          && !prometheus.query("redlockd_streams_open{kind=\"Observe\"} == 1").isEmpty());

      Map<String, String> panels = panelQueries();
      List<String> failures = new ArrayList<>();
      for (Map.Entry<String, String> panel : panels.entrySet()) {
        String promql = dashboardVariablesFilledIn(panel.getValue());
        failures.addAll(namesCheck(prometheus, "panel " + panel.getKey(), promql));
        if (prometheus.query(promql).isEmpty()) {
          failures.add("panel " + panel.getKey() + " returns no series: " + promql);
        }
      }

      // The cold start and the first load: no alert went pending. (Not asked of the scaled copy:
      // its `for` of seconds takes a busy machine's blips for faults.)
      assertThat(alertsSince(prometheus, scrapedSince, "alertname!~\".*" + ScaledRules.SUFFIX + "\""))
          .as("alerts pending or firing since the first scrape").isEmpty();

      // One Redis node frozen: one more failure stops the service, the margin alert is pending.
      Map<String, String> alerts = alertQueries(prometheus);
      assertThat(alerts.keySet()).as("the rules Prometheus loaded").containsExactlyInAnyOrderElementsOf(
          alertNames(Files.readString(RULES)));
      cluster.pause(0);
      try {
        awaitPending(prometheus, "RedlockdQuorumMarginLow", "RedlockdNodeNotVoting");
        assertThat(prometheus.query(alerts.get("RedlockdQuorumMarginLow"))).isNotEmpty();
        // A second one: the quorum is gone, the replica stops serving, Acquire fails UNAVAILABLE and the
        // kept lease and the leadership go into jeopardy.
        cluster.pause(1);
        awaitPending(prometheus, "RedlockdQuorumLost", "RedlockdNotServing");
        await().atMost(Duration.ofSeconds(10)).until(() ->
            codeOf(() -> locks.get().acquire(acquireRequest("prom/unavailable", TTL, Duration.ZERO, ""))).getCode()
                == Status.Code.UNAVAILABLE);
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(500)).until(() ->
            !prometheus.query("redlockd_kept_lease_renewals_total{state=\"JEOPARDY\"} > 0").isEmpty()
            && !prometheus.query("redlockd_rpc_calls_total{method=\"Acquire\",code=\"UNAVAILABLE\"}").isEmpty());
        // On the scaled clock the fault is long enough for the quorum alerts to fire.
        awaitFiring(prometheus, "RedlockdQuorumLost" + ScaledRules.SUFFIX, "RedlockdNotServing" + ScaledRules.SUFFIX);
      } finally {
        cluster.resumeAll();
      }
      await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250))
          .until(() -> !prometheus.query("redlockd_quorum_margin == 1").isEmpty());

      // Over. On the scaled clock every alert stops firing within its bound: the rate window (5 s)
      // after the scrape that saw the quorum back, plus a scrape and an evaluation, and one of each
      // more for the scrape and evaluation that were under way. The real rules' bound is a minute:
      // what fired during the fault (leases lost) may still fire, but nothing else starts to.
      Set<String> firingAtTheEnd =
          alertsSince(prometheus, System.nanoTime() - INTERVAL.toNanos(), "alertstate=\"firing\"");
      Duration bound = SCALED_WINDOW.plus(INTERVAL.multipliedBy(4));
      long cleared = System.nanoTime();
      await().atMost(bound).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
          assertThat(prometheus.query("ALERTS{alertstate=\"firing\",alertname=~\".*" + ScaledRules.SUFFIX + "\"}"))
              .as("scaled alerts firing %s after the quorum's return", bound).isEmpty());
      System.out.printf("PrometheusRulesTest: every scaled alert stopped firing %d ms after the quorum came back%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cleared));
      // For a scaled window and an evaluation more, none fires again, and no real alert starts to.
      long quiet = System.nanoTime();
      Thread.sleep(SCALED_WINDOW.plus(INTERVAL.multipliedBy(2)).toMillis());
      assertThat(alertsSince(prometheus, quiet, "alertstate=\"firing\"")).as("alerts firing after the fault was over")
          .allMatch(alert -> !alert.contains(ScaledRules.SUFFIX))
          .isSubsetOf(firingAtTheEnd);

      // Every alert expression evaluates, names what exists, and each of its selectors has series.
      for (Map.Entry<String, String> alert : alerts.entrySet()) {
        String promql = alert.getValue();
        failures.addAll(namesCheck(prometheus, "alert " + alert.getKey(), promql));
        prometheus.query(promql);
        Matcher selector = SELECTOR.matcher(promql);
        while (selector.find()) {
          if (prometheus.query(selector.group()).isEmpty()) {
            failures.add("alert " + alert.getKey() + ": selector " + selector.group() + " has no series");
          }
        }
      }
      assertThat(failures).as("%d panel queries and %d alert expressions evaluated", panels.size(), alerts.size())
          .isEmpty();
      System.out.printf("PrometheusRulesTest: %d panel queries and %d alert expressions evaluated against %s%n",
          panels.size(), alerts.size(), "a real Prometheus");
      asking.close();
      campaign.onCompleted();
      locks.get().release(
          ReleaseRequest.newBuilder().setResource(held.getResource()).setToken(held.getToken()).build());
    }
  }

  /** Metric names must be among Prometheus' names; labels in matchers and groupings on their series. */
  private static List<String> namesCheck(Prometheus prometheus, String what, String promql) {
    Set<String> known = new TreeSet<>();
    prometheus.api("/api/v1/label/__name__/values").getAsJsonArray().forEach(n -> known.add(n.getAsString()));
    List<String> failures = new ArrayList<>();
    Set<String> labelsOfAll = new LinkedHashSet<>();
    Matcher selector = SELECTOR.matcher(promql);
    while (selector.find()) {
      String metric = selector.group(1);
      if (!known.contains(metric)) {
        failures.add(what + ": no metric " + metric + " in Prometheus: " + promql);
        continue;
      }
      Set<String> labels = labelsOf(prometheus, metric);
      labelsOfAll.addAll(labels);
      if (selector.group(2) != null) {
        Matcher matcher = MATCHER.matcher(selector.group(2));
        while (matcher.find()) {
          if (!labels.contains(matcher.group(1))) {
            failures.add(what + ": " + metric + " has no label " + matcher.group(1) + " (only " + labels + ")");
          }
        }
      }
    }
    Matcher grouping = GROUPING.matcher(promql);
    while (grouping.find()) {
      for (String label : grouping.group(1).split(",")) {
        String name = label.trim();
        if (!name.isEmpty() && !labelsOfAll.contains(name)) {
          failures.add(what + ": groups by " + name + ", a label none of its metrics has: " + promql);
        }
      }
    }
    return failures;
  }

  private static Set<String> labelsOf(Prometheus prometheus, String metric) {
    Set<String> labels = new TreeSet<>();
    for (JsonElement series : prometheus.api("/api/v1/series", "match[]", metric).getAsJsonArray()) {
      labels.addAll(series.getAsJsonObject().keySet());
    }
    return labels;
  }

  /** Each rule as Prometheus loaded it from alerts.yml (not the scaled copy): alert name to expression. */
  private static Map<String, String> alertQueries(Prometheus prometheus) {
    Map<String, String> alerts = new LinkedHashMap<>();
    for (JsonElement group : prometheus.api("/api/v1/rules").getAsJsonObject().getAsJsonArray("groups")) {
      for (JsonElement rule : group.getAsJsonObject().getAsJsonArray("rules")) {
        JsonObject r = rule.getAsJsonObject();
        String name = r.get("name").getAsString();
        if (!name.endsWith(ScaledRules.SUFFIX)) {
          alerts.put(name, r.get("query").getAsString());
        }
      }
    }
    return alerts;
  }

  private static List<String> alertNames(String rules) {
    List<String> names = new ArrayList<>();
    Matcher m = ALERT_NAME.matcher(rules);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /**
   * The alerts (pending or firing, and matching these label matchers) at any evaluation since
   * {@code sinceNanos}, as "name state".
   */
  private static Set<String> alertsSince(Prometheus prometheus, long sinceNanos, String matchers) {
    // Not a moment before: an alert that stopped just before then still has samples there.
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNanos);
    String selector = "ALERTS{" + matchers + "}";
    Set<String> seen = new TreeSet<>();
    for (JsonObject series : prometheus.query("count_over_time(" + selector + "[" + millis + "ms])")) {
      JsonObject labels = series.getAsJsonObject("metric");
      seen.add(labels.get("alertname").getAsString() + " " + labels.get("alertstate").getAsString());
    }
    return seen;
  }

  /** Every panel target of the dashboard: "panel title/refId" to its expression. */
  private static Map<String, String> panelQueries() throws IOException {
    JsonObject dashboard = JsonParser.parseString(Files.readString(DASHBOARD)).getAsJsonObject();
    assertThat(dashboard.getAsJsonArray("__inputs").get(0).getAsJsonObject().get("name").getAsString())
        .isEqualTo("DS_PROMETHEUS");
    Map<String, String> queries = new LinkedHashMap<>();
    for (JsonElement panel : dashboard.getAsJsonArray("panels")) {
      JsonObject p = panel.getAsJsonObject();
      JsonArray targets = p.getAsJsonArray("targets");
      if (targets == null) {
        continue;
      }
      assertThat(p.getAsJsonObject("datasource").get("uid").getAsString()).isEqualTo("${DS_PROMETHEUS}");
      for (JsonElement target : targets) {
        JsonObject t = target.getAsJsonObject();
        queries.put(p.get("title").getAsString() + "/" + t.get("refId").getAsString(), t.get("expr").getAsString());
      }
    }
    assertThat(queries).isNotEmpty();
    return queries;
  }

  /** What Grafana puts for the dashboard's variables: every replica, and a rate window of several scrapes. */
  private static String dashboardVariablesFilledIn(String promql) {
    return promql.replace("$instance", ".*").replace("$__rate_interval", "1m");
  }

  private static void awaitPending(Prometheus prometheus, String... names) {
    for (String name : names) {
      await().alias(name + " pending").atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250))
          .until(() -> !prometheus.query("ALERTS{alertname=\"" + name + "\",alertstate=\"pending\"}").isEmpty());
    }
    JsonArray active = prometheus.api("/api/v1/alerts").getAsJsonObject().getAsJsonArray("alerts");
    Set<String> pending = new TreeSet<>();
    active.forEach(a -> {
      JsonObject alert = a.getAsJsonObject();
      if (alert.get("state").getAsString().equals("pending")) {
        pending.add(alert.getAsJsonObject("labels").get("alertname").getAsString());
      }
    });
    assertThat(pending).contains(names);
  }

  private static void awaitFiring(Prometheus prometheus, String... names) {
    for (String name : names) {
      await().alias(name + " firing").atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250))
          .until(() -> !prometheus.query("ALERTS{alertname=\"" + name + "\",alertstate=\"firing\"}").isEmpty());
    }
  }

  private static <T> StreamObserver<T> firstOf(CompletableFuture<T> first) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        first.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        first.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        first.completeExceptionally(new IllegalStateException("ended before its first answer"));
      }
    };
  }

  private static io.grpc.ClientInterceptor bearer(String token) {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(String.join(" ", command) + ":\n" + out).isZero();
    return out;
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
