package dev.redlockd.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * How the healthcheck reads a running server: which command lines are a server's and where its
 * flags start, and flags parsed with that server's environment rather than the check's.
 */
class RunningServerTest {

  @Test
  void theFlagsAreWhatFollowsTheJarOrTheMainClass() {
    assertThat(RunningServer.serverArgs(List.of("java", "-XX:+ExplicitGCInvokesConcurrent", "-jar",
        "/app/redlockd-server.jar", "--port", "6000"))).hasValue(List.of("--port", "6000"));
    assertThat(RunningServer.serverArgs(List.of("/usr/bin/java", "-cp", "lib/*", "dev.redlockd.server.Main",
        "--dev"))).hasValue(List.of("--dev"));
    assertThat(RunningServer.serverArgs(List.of("java", "-jar", "redlockd-server.jar"))).hasValue(List.of());
  }

  @Test
  void aHealthcheckOrAnotherProgramIsNoServer() {
    assertThat(RunningServer.serverArgs(List.of("java", "-jar", "/app/redlockd-server.jar", "healthcheck",
        "--server-pid", "1"))).isEmpty();
    assertThat(RunningServer.serverArgs(List.of("java", "-jar", "/opt/other.jar", "--port", "6000"))).isEmpty();
    assertThat(RunningServer.serverArgs(List.of("/sbin/docker-init", "--", "java"))).isEmpty();
    assertThat(RunningServer.serverArgs(List.of())).isEmpty();
  }

  @Test
  void flagsAreReadFromTheGivenEnvironmentAndAFlagWins() {
    Map<String, String> env = Map.of("REDLOCKD_PORT", "6000", "REDLOCKD_TLS_CERT", "/etc/redlockd/${cert}.pem");
    ServerConfig fromEnvironment = parse(env);
    assertThat(fromEnvironment.port).isEqualTo(6000);
    assertThat(fromEnvironment.tlsCert).as("a value is taken as it is, ${...} included")
        .isEqualTo("/etc/redlockd/${cert}.pem");
    assertThat(fromEnvironment.bind).as("not in that environment: the flag's own default").isEmpty();
    assertThat(fromEnvironment.nodeTimeout).hasMillis(50);
    assertThat(parse(env, "--port", "7000").port).isEqualTo(7000);
    assertThat(parse(Map.of()).port).isEqualTo(50051);
  }

  private static ServerConfig parse(Map<String, String> env, String... args) {
    ServerConfig config = new ServerConfig();
    CommandLine cli = ServerConfig.commandLine(config);
    cli.setDefaultValueProvider(new EnvironmentDefaults(env, ServerConfig.class));
    cli.parseArgs(args);
    return config;
  }

  @Test
  void aServerPidThatIsNoProcessIsABadFlag() {
    assertThatThrownBy(() -> RunningServer.find(Integer.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--server-pid " + Integer.MAX_VALUE);
  }
}
