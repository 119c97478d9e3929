package dev.redlockd.server;

import dev.redlockd.node.DistinctEndpoints;
import dev.redlockd.node.SameInstanceException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * {@code java -jar redlockd-server.jar --redis ...|--dev [flags]}: runs until SIGTERM or SIGINT
 * (SIGHUP reloads the policy, never stops it).
 * {@code java -jar redlockd-server.jar healthcheck [flags]}: asks a running server once.
 */
public final class Main {
  private Main() {}

  /**
   * Netty's own JFR events (its buffer allocator's) stay off unless a flag asks for them:
   * registering them at start-up sets up JFR's event metadata, which cost a start 0.16 s of its
   * 1.31 s of CPU until it listens (a 2-core machine of the CI kind, quiet, docs/operating.md),
   * paid again by every replica of a rolling restart. {@code -Dio.netty.jfr.enabled=true} brings them back;
   * the JVM's own JFR events are not touched.
   */
  static final String NETTY_JFR = "io.netty.jfr.enabled";

  public static void main(String[] args) {
    nettyJfrOffUnlessAsked();
    System.exit(run(List.of(args), new PrintWriter(System.out, true), new PrintWriter(System.err, true),
        System.getenv()));
  }

  static void nettyJfrOffUnlessAsked() {
    if (System.getProperty(NETTY_JFR) == null) {
      System.setProperty(NETTY_JFR, "false");
    }
  }

  static int run(String[] args, PrintWriter err) {
    return run(List.of(args), new PrintWriter(System.out, true), err, System.getenv());
  }

  /**
   * What {@code main} does, with these streams and this environment (every flag's variable is
   * read from it), returning the exit code instead of exiting: for embedding and tests. A server
   * it starts runs until SIGTERM or SIGINT, and then returns 0.
   */
  public static int run(List<String> args, PrintWriter out, PrintWriter err, Map<String, String> env) {
    ServerConfig config = new ServerConfig();
    HealthCheckCommand healthCheck = new HealthCheckCommand();
    CommandLine cli = ServerConfig.commandLine(config).addSubcommand(ServerConfig.commandLine(healthCheck));
    cli.setDefaultValueProvider(new EnvironmentDefaults(env, ServerConfig.class, HealthCheckCommand.class));
    try {
      CommandLine.ParseResult parsed = cli.parseArgs(args.toArray(String[]::new));
      if (CommandLine.printHelpIfRequested(parsed)) {
        return 0;
      }
      if (parsed.hasSubcommand()) {
        if (!parsed.matchedOptions().isEmpty()) {
          // `--port 6000 healthcheck` would otherwise check the default port, silently.
          throw new IllegalArgumentException("healthcheck takes its flags after the word healthcheck");
        }
        return healthCheck.run(out);
      }
      LogLevel.check(env);
      config.engineConfig();
      config.accessControl(); // a policy or token file that does not load stops start-up here
      config.startMode();
      if (!config.devMode()) {
        // localhost and 127.0.0.1 are one node: refused before any node is contacted
        DistinctEndpoints.check(config.nodeLists().nodes());
      }
      // Last, and still before any Redis node is contacted: a port in use would otherwise be
      // found only after the nodes were probed and, on a new cluster, written to.
      PortCheck.check(config.bindAddress(), config.port, config.metricsPort);
    } catch (CommandLine.ParameterException | IllegalArgumentException e) {
      // A bad flag stops start-up with a one-line reason.
      err.println("redlockd: " + ServerConfig.explain(e, args, env) + " (see --help)");
      err.flush();
      return 2;
    }
    Hangup.keepRunning(config.policy != null && !config.policy.isBlank());
    RedlockdServer server;
    try {
      server = RedlockdServer.start(config);
    } catch (SameInstanceException e) {
      err.println("redlockd: --redis names one Redis instance twice: " + e.getMessage());
      err.flush();
      return 2;
    } catch (Exception e) {
      err.println("redlockd: cannot start: " + e.getMessage());
      err.flush();
      org.slf4j.LoggerFactory.getLogger(Main.class).error("start-up failed", e);
      return 1;
    }
    // SIGTERM and SIGINT: the graceful shutdown, then exit 0 (Termination).
    Termination termination = Termination.on(server::close);
    if (config.devMode()) {
      // Any other way out: end the streams (releasing nothing) before the dev Redis nodes stop.
      dev.redlockd.server.dev.RedisProcess.beforeExitKill(server::close);
    } else {
      Runtime.getRuntime().addShutdownHook(new Thread(server::close, "redlockd-shutdown"));
    }
    try {
      server.awaitTermination();
      termination.await(); // the gRPC server ends first; the rest of the shutdown and its log follow
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }
}
