package dev.redlockd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.engine.EngineConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import dev.redlockd.testing.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerConfigTest {

  @Test
  void defaultsFollowTheSpec() {
    ServerConfig c = ServerConfig.parse("--redis", "redis://a:1");
    EngineConfig e = c.engineConfig();
    assertThat(c.port).isEqualTo(50051);
    assertThat(c.nodeTimeout).isEqualTo(Duration.ofMillis(50));
    assertThat(e.driftFactor()).isEqualTo(0.01);
    assertThat(e.minTtl()).isEqualTo(Duration.ofMillis(10));
    assertThat(e.maxTtl()).isEqualTo(Duration.ofHours(1));
    assertThat(e.retryDelay()).isEqualTo(Duration.ofMillis(100));
    assertThat(e.keyPrefix()).isEqualTo("redlock:");
    assertThat(c.metricsPort).isZero();
    assertThat(c.allowForceRelease).isFalse();
    assertThat(c.devMode()).isFalse();
  }

  @Test
  void theRemovedReleaseOnDisconnectFlagStopsStartUpWithItsReason() {
    // A partitioned holder looks exactly like a gone one: releasing would break rule 1.
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://a:1", "--release-on-disconnect"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--release-on-disconnect")
        .hasMessageContaining("was removed")
        .hasMessageContaining("partition");
    assertThatThrownBy(() -> ServerConfig.parse("--release-on-disconnect=true"))
        .hasMessageContaining("was removed");
    assertThat(ServerConfig.parse("--redis", "redis://a:1", "--release-on-disconnect=false").devMode()).isFalse();
  }

  @Test
  void theAdmissionBoundIsTheNodeTimeoutUnlessSetAndZeroIsOff() {
    assertThat(ServerConfig.parse("--redis", "redis://a:1").admissionBound()).isEqualTo(Duration.ofMillis(50));
    assertThat(ServerConfig.parse("--redis", "redis://a:1", "--node-timeout", "200ms").admissionBound())
        .isEqualTo(Duration.ofMillis(200));
    assertThat(ServerConfig.parse("--redis", "redis://a:1", "--admission-latency", "40ms").admissionBound())
        .isEqualTo(Duration.ofMillis(40));
    assertThat(ServerConfig.parse("--redis", "redis://a:1", "--admission-latency", "0").admissionBound()).isZero();
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://a:1", "--admission-latency", "soon"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--admission-latency");
  }

  @Test
  void aStartWarmsUpUnlessToldNotToAndNeverANegativeNumberOfLeases() {
    assertThat(warmUp(java.util.Map.of())).isEqualTo(ServerConfig.WARM_UP_DEFAULT).isEqualTo(200);
    // The suite's own environment sets REDLOCKD_WARM_UP=0 (root pom.xml); the flag wins over it.
    assertThat(warmUp(java.util.Map.of("REDLOCKD_WARM_UP", "0"))).isZero();
    assertThat(warmUp(java.util.Map.of("REDLOCKD_WARM_UP", "0"), "--warm-up", "50")).isEqualTo(50);
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://a:1", "--warm-up", "-1"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--warm-up must not be negative");
  }

  private static int warmUp(java.util.Map<String, String> env, String... args) {
    ServerConfig config = new ServerConfig();
    picocli.CommandLine cli = ServerConfig.commandLine(config);
    cli.setDefaultValueProvider(new EnvironmentDefaults(env, ServerConfig.class));
    cli.parseArgs(args);
    return config.warmUp;
  }

  @Test
  void forceReleaseIsAllowedOnlyWhenAsked() {
    assertThat(ServerConfig.parse("--dev", "--allow-force-release").allowForceRelease).isTrue();
    assertThat(ServerConfig.parse("--dev", "--allow-force-release=false").allowForceRelease).isFalse();
  }

  @Test
  void devModeOnlyWhenAskedFor() {
    assertThat(ServerConfig.parse("--dev").devMode()).isTrue();
    assertThat(ServerConfig.parse("--dev=true").devMode()).isTrue();
    // An empty --redis (an unset shell variable) must not start throwaway local nodes in production.
    assertThatThrownBy(() -> ServerConfig.parse())
        .hasMessageContaining("give --redis").hasMessageContaining("--dev");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", ""))
        .hasMessageStartingWith("--redis is empty or not given");
    assertThatThrownBy(() -> ServerConfig.parse("--dev", "--redis", "redis://a:1"))
        .hasMessageContaining("--dev and --redis exclude each other");
  }

  @Test
  void redisErrorsNameTheFlag() {
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://127.0.0.1:99999"))
        .hasMessage("--redis: port 99999 is out of range 1..65535: redis://127.0.0.1:99999");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://a:1,,redis://b:2"))
        .hasMessageStartingWith("--redis: entry 2 of 3 is empty");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://host:6379/99"))
        .hasMessageStartingWith("--redis: redlockd uses database 0 only");
  }

  @Test
  void nodesPerResourceIsOddAndWithinTheNodesAndDefaultsToEveryNode() {
    String seven = "a=redis://h:1,b=redis://h:2,c=redis://h:3,d=redis://h:4,e=redis://h:5,f=redis://h:6,g=redis://h:7";
    assertThat(ServerConfig.parse("--redis", seven).resolvedNodesPerResource()).isEqualTo(7);
    assertThat(ServerConfig.parse("--redis", seven, "--nodes-per-resource", "3").resolvedNodesPerResource())
        .isEqualTo(3);
    assertThat(ServerConfig.parse("--dev", "--dev-nodes", "4").resolvedNodesPerResource()).isEqualTo(4);
    assertThatThrownBy(() -> ServerConfig.parse("--redis", seven, "--nodes-per-resource", "4"))
        .hasMessage("--nodes-per-resource must be odd (or all 7 nodes), not 4");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", seven, "--nodes-per-resource", "9"))
        .hasMessage("--nodes-per-resource must lie in 1..7 (the number of --redis nodes), not 9");
    assertThatThrownBy(() -> ServerConfig.parse("--dev", "--nodes-per-resource", "5"))
        .hasMessage("--nodes-per-resource must lie in 1..3 (the number of --redis nodes), not 5 (--dev-nodes 3)");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "a=redis://h:1,a=redis://:pw@h:2"))
        .hasMessage("--redis: node id 'a' is given twice: each node needs its own");
  }

  @Test
  void redisNextIsTheListAMembershipChangeGoesTo() {
    String five = "a=redis://h:1,b=redis://h:2,c=redis://h:3,d=redis://h:4,e=redis://h:5";
    String replaced = "a=redis://h:1,b=redis://h:2,c=redis://h:3,d=redis://h:4,x=redis://h:6";
    NodeLists lists = ServerConfig.parse("--redis", five, "--redis-next", replaced).nodeLists();
    assertThat(lists.ids()).containsExactly("a", "b", "c", "d", "e", "x");
    assertThat(lists.old()).containsExactly("a", "b", "c", "d", "e");
    assertThat(lists.next()).contains(List.of("a", "b", "c", "d", "x"));
    assertThat(ServerConfig.parse("--redis", five).nodeLists().next()).isEmpty();
    assertThatThrownBy(() -> ServerConfig.parse("--redis", five, "--redis-next", "a=redis://h:9"))
        .hasMessage("node id 'a' names a=redis://h:1 in --redis but a=redis://h:9 in --redis-next: a node in both "
            + "lists must be given the same address in each");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", five, "--redis-next", "z=redis://h:1"))
        .hasMessage("--redis and --redis-next give one Redis node two different ids");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", five, "--redis-next", five))
        .hasMessage("--redis-next lists the same nodes as --redis: there is no change to make");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", five, "--redis-next", "a=redis://h:1,b=redis://h:2,"
        + "c=redis://h:3", "--nodes-per-resource", "5"))
        .hasMessage("--nodes-per-resource must lie in 1..3 (the number of --redis nodes), not 5 (for --redis-next's "
            + "3 nodes)");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", five, "--redis-next", "a=redis://h:1,,b=redis://h:2"))
        .hasMessageStartingWith("--redis-next: entry 2 of 3 is empty");
    // The records that guard the change name nodes by id: a list of plain addresses keeps none.
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://h:1,redis://h:2,redis://h:3", "--redis-next",
        "redis://h:1,redis://h:2,redis://h:4"))
        .hasMessageStartingWith("--redis-next needs every node of both lists named (id=redis://host:port)");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "a=redis://h:1,b=redis://h:2,redis://h:3", "--redis-next",
        "a=redis://h:1,b=redis://h:2,x=redis://h:4"))
        .hasMessageStartingWith("--redis-next needs every node of both lists named");
    assertThat(lists.named()).isTrue();
    assertThat(ServerConfig.parse("--redis", "redis://h:1,redis://h:2,redis://h:3").nodeLists().named()).isFalse();
  }

  @Test
  void theMetricsPortMustDifferFromTheGrpcPort() {
    assertThatThrownBy(() -> ServerConfig.parse("--dev", "--port", "9464", "--metrics-port", "9464"))
        .hasMessage("--metrics-port must differ from --port (both 9464)");
    assertThat(ServerConfig.parse("--dev", "--port", "0", "--metrics-port", "0").metricsPort).isZero();
  }

  @Test
  void aBadValueIsNamedByTheVariableItCameFrom() {
    // The environment cannot be set in-process: the conversion itself is checked with a real
    // process (StartupErrorsTest); here, how a reason is worded for either origin.
    assertThatThrownBy(() -> ServerConfig.parse("--port", "abc")).hasMessage("--port abc: not a whole number");
    assertThatThrownBy(() -> ServerConfig.parse("--drift-factor", "x")).hasMessage("--drift-factor x: not a number");
    IllegalArgumentException range = new IllegalArgumentException("--port must lie in 0..65535, not 70000");
    assertThat(ServerConfig.explain(range, java.util.List.of(), java.util.Map.of("REDLOCKD_PORT", "70000")))
        .isEqualTo("REDLOCKD_PORT must lie in 0..65535, not 70000");
    // Given on the command line as well: the flag won, so the flag is named.
    assertThat(ServerConfig.explain(range, java.util.List.of("--port=70000"), java.util.Map.of("REDLOCKD_PORT", "1")))
        .isEqualTo("--port must lie in 0..65535, not 70000");
    // Only the first mention is the culprit; the advice keeps the flag.
    IllegalArgumentException empty = new IllegalArgumentException("--redis is empty or not given: give --redis x");
    assertThat(ServerConfig.explain(empty, java.util.List.of(), java.util.Map.of("REDLOCKD_REDIS", "")))
        .isEqualTo("REDLOCKD_REDIS is empty or not given: give --redis x");
  }

  @Test
  void helpNamesEachOptionsEnvironmentVariable() {
    String usage = ServerConfig.commandLine(new ServerConfig()).getUsageMessage(picocli.CommandLine.Help.Ansi.OFF)
        .replaceAll("\\s+", " "); // the help wraps long lines anywhere
    for (picocli.CommandLine.Model.OptionSpec option
        : ServerConfig.commandLine(new ServerConfig()).getCommandSpec().options()) {
      if (option.usageHelp() || option.versionHelp() || option.hidden()) {
        continue;
      }
      String variable = ServerConfig.variable(option.defaultValueString(false)).orElseThrow();
      assertThat(usage).as(option.longestName()).contains("Environment: " + variable + ".");
    }
    assertThat(usage).contains("REDLOCKD_LOG_LEVEL").contains("REDLOCKD_DEV");
    // Still the declared order, --help and --version last.
    assertThat(usage.indexOf("--bind")).isLessThan(usage.indexOf("--port="));
    assertThat(usage.indexOf("--shutdown-grace")).isLessThan(usage.indexOf("--help"));
  }

  @Test
  void anUnknownLogLevelIsRefusedWithTheValidOnes() {
    LogLevel.check(java.util.Map.of());
    LogLevel.check(java.util.Map.of("REDLOCKD_LOG_LEVEL", "warn"));
    assertThatThrownBy(() -> LogLevel.check(java.util.Map.of("REDLOCKD_LOG_LEVEL", "WARNING")))
        .hasMessage("REDLOCKD_LOG_LEVEL=WARNING: not a log level; use one of TRACE, DEBUG, INFO, WARN, ERROR or OFF");
  }

  @Test
  void aPortInUseIsNamedWithItsFlag() throws Exception {
    java.net.InetAddress loopback = java.net.InetAddress.getLoopbackAddress();
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, loopback)) {
      int port = taken.getLocalPort();
      assertThatThrownBy(() -> PortCheck.check(loopback, port, 0))
          .hasMessage("--port " + port + ": address already in use (on 127.0.0.1)");
      assertThatThrownBy(() -> PortCheck.check(loopback, 0, port))
          .hasMessageStartingWith("--metrics-port " + port + ": address already in use");
    }
  }

  @Test
  void durationsTakeTheDocumentedUnits() {
    assertThat(DurationFlag.parse("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(DurationFlag.parse("10s")).isEqualTo(Duration.ofSeconds(10));
    assertThat(DurationFlag.parse("5m")).isEqualTo(Duration.ofMinutes(5));
    assertThat(DurationFlag.parse("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(DurationFlag.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(DurationFlag.format(Duration.ofMinutes(5))).isEqualTo("5m");
  }

  @Test
  void badFlagsAreRefusedWithAReason() {
    assertThatThrownBy(() -> ServerConfig.parse("--max-ttl", "banana"))
        .hasMessageContaining("banana").hasMessageContaining("250ms");
    assertThatThrownBy(() -> ServerConfig.parse("--min-ttl", "2s", "--max-ttl", "1s"))
        .hasMessageContaining("max-ttl");
    assertThatThrownBy(() -> ServerConfig.parse("--drift-factor", "0.7"))
        .hasMessageContaining("drift-factor");
    assertThatThrownBy(() -> ServerConfig.parse("--port", "70000")).hasMessageContaining("--port");
    assertThatThrownBy(() -> ServerConfig.parse("--metrics-port", "-1")).hasMessageContaining("--metrics-port");
    assertThatThrownBy(() -> ServerConfig.parse("--keepalive-time", "0s")).hasMessageContaining("--keepalive-time");
    assertThatThrownBy(() -> ServerConfig.parse("--no-such-flag")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void tlsFlagsAreCheckedAtStartUp(@TempDir Path dir) {
    TestCertificates.Authority ca = TestCertificates.authority(dir, "test CA");
    TestCertificates.Issued server = ca.issue("localhost", "127.0.0.1", "localhost");
    String cert = server.cert().toString();
    String key = server.key().toString();
    ServerConfig tls = ServerConfig.parse("--redis", "redis://a:1", "--tls-cert", cert, "--tls-key", key,
        "--tls-client-ca", ca.cert().toString());
    assertThat(tls.grpcSecurity()).startsWith("mutual TLS");
    assertThat(ServerConfig.parse("--redis", "redis://a:1").grpcSecurity()).startsWith("plaintext");
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://a:1", "--tls-cert", cert))
        .hasMessage("--tls-cert needs --tls-key (its private key)");
    assertThatThrownBy(() -> ServerConfig.parse("--tls-client-ca", ca.cert().toString()))
        .hasMessageStartingWith("--tls-client-ca needs --tls-cert");
    assertThatThrownBy(() -> ServerConfig.parse("--tls-cert", cert, "--tls-key", cert))
        .hasMessageContaining("--tls-key").hasMessageContaining("no PEM private key");
  }

  @Test
  void redisTlsFlagsNeedARedissNode(@TempDir Path dir) {
    TestCertificates.Authority ca = TestCertificates.authority(dir, "test CA");
    String bundle = ca.cert().toString();
    assertThat(ServerConfig.parse("--redis", "rediss://a:1,redis://b:2", "--redis-tls-ca", bundle)
        .redisTls()).isPresent();
    // A node meant as rediss:// but written redis:// would send its traffic in clear.
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://a:1", "--redis-tls-ca", bundle))
        .hasMessageContaining("no --redis node uses rediss://");
    assertThatThrownBy(() -> ServerConfig.parse("--redis-tls-ca", bundle))
        .hasMessageContaining("no --redis node uses rediss://");
  }

  @Test
  void mainPrintsOneLineAndExitsTwoForAnUnusableTlsFile(@TempDir Path dir) {
    StringWriter err = new StringWriter();
    Path missing = dir.resolve("missing.pem");
    int code = Main.run(new String[] {"--tls-cert", missing.toString(), "--tls-key", missing.toString()},
        new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString().strip()).isEqualTo("redlockd: --tls-cert: no such file " + missing + " (see --help)");
  }

  @Test
  void mainPrintsOneLineAndExitsTwoOnABadFlag() {
    StringWriter err = new StringWriter();
    int code = Main.run(new String[] {"--retry-delay", "soon"}, new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString().strip()).startsWith("redlockd: ").doesNotContain("\n");
  }

  @Test
  void bindIsALiteralAddressOnEveryInterfaceByDefault() {
    assertThat(ServerConfig.parse("--redis", "redis://a:1").bindAddress().getHostAddress()).isEqualTo("0.0.0.0");
    assertThat(ServerConfig.parse("--redis", "redis://a:1", "--bind", "127.0.0.1").bindAddress().isLoopbackAddress())
        .isTrue();
    assertThatThrownBy(() -> ServerConfig.parse("--redis", "redis://a:1", "--bind", "localhost"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--bind must be an IP address");
  }

  /** Bearer tokens cross the network in clear on a plaintext port: allowed on loopback, with TLS, or when asked. */
  @Test
  void plaintextTokensOffLoopbackNeedTlsOrTheExplicitFlag(@TempDir Path dir) {
    String[] tokens = {"--redis", "redis://a:1", "--policy", "policy.json", "--tokens", "tokens"};
    assertThatThrownBy(() -> ServerConfig.parse(tokens))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--tokens").hasMessageContaining("--tls-cert").hasMessageContaining("--bind")
        .hasMessageContaining("--allow-plaintext-tokens");
    assertThatThrownBy(() -> ServerConfig.parse(concat(tokens, "--bind", "10.1.2.3")))
        .hasMessageContaining("--allow-plaintext-tokens");
    ServerConfig.parse(concat(tokens, "--bind", "127.0.0.1"));
    ServerConfig.parse(concat(tokens, "--bind", "::1"));
    ServerConfig.parse(concat(tokens, "--allow-plaintext-tokens"));
    TestCertificates.Issued server = TestCertificates.authority(dir, "test CA").issue("localhost", "127.0.0.1");
    ServerConfig.parse(concat(tokens, "--tls-cert", server.cert().toString(), "--tls-key", server.key().toString()));
    ServerConfig.parse("--redis", "redis://a:1", "--policy", "policy.json"); // no tokens, nothing to send in clear

    StringWriter err = new StringWriter();
    assertThat(Main.run(tokens, new PrintWriter(err))).isEqualTo(2);
    assertThat(err.toString().strip()).startsWith("redlockd: --tokens").doesNotContain("\n")
        .contains("--allow-plaintext-tokens");
  }

  private static String[] concat(String[] flags, String... more) {
    String[] all = java.util.Arrays.copyOf(flags, flags.length + more.length);
    System.arraycopy(more, 0, all, flags.length, more.length);
    return all;
  }
}
