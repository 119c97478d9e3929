package dev.redlockd.server;

import dev.redlockd.node.DistinctEndpoints;
import dev.redlockd.node.NodeAddress;
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

  public static void main(String[] args) {
    System.exit(run(args, new PrintWriter(System.err, true)));
  }

  static int run(String[] args, PrintWriter err) {
    return run(args, err, System.getenv());
  }

  /** {@code env} is what the flags' defaults were read from, to name a variable that held a bad value. */
  static int run(String[] args, PrintWriter err, Map<String, String> env) {
    ServerConfig config = new ServerConfig();
    HealthCheckCommand healthCheck = new HealthCheckCommand();
    CommandLine cli = ServerConfig.commandLine(config).addSubcommand(healthCheck);
    try {
      CommandLine.ParseResult parsed = cli.parseArgs(args);
      if (CommandLine.printHelpIfRequested(parsed)) {
        return 0;
      }
      if (parsed.hasSubcommand()) {
        if (!parsed.matchedOptions().isEmpty()) {
          // `--port 6000 healthcheck` would otherwise check the default port, silently.
          throw new IllegalArgumentException("healthcheck takes its flags after the word healthcheck");
        }
        return healthCheck.run(new PrintWriter(System.out, true));
      }
      LogLevel.check(env);
      config.engineConfig();
      config.accessControl(); // a policy or token file that does not load stops start-up here
      config.startMode();
      if (!config.devMode()) {
        // localhost and 127.0.0.1 are one node: refused before any node is contacted
        DistinctEndpoints.check(NodeAddress.parseList(config.redis));
      }
      // Last, and still before any Redis node is contacted: a port in use would otherwise be
      // found only after the nodes were probed and, on a new cluster, written to.
      PortCheck.check(config.bindAddress(), config.port, config.metricsPort);
    } catch (CommandLine.ParameterException | IllegalArgumentException e) {
      // A bad flag stops start-up with a one-line reason.
      err.println("redlockd: " + ServerConfig.explain(e, List.of(args), env) + " (see --help)");
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
    if (config.devMode()) {
      // One hook, in order: end the streams (releasing nothing), then stop the dev Redis nodes.
      dev.redlockd.server.dev.RedisProcess.beforeExitKill(server::close);
    } else {
      Runtime.getRuntime().addShutdownHook(new Thread(server::close, "redlockd-shutdown"));
    }
    try {
      server.awaitTermination();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }
}
