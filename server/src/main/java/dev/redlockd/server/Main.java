package dev.redlockd.server;

import dev.redlockd.node.DistinctEndpoints;
import dev.redlockd.node.NodeAddress;
import dev.redlockd.node.SameInstanceException;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * {@code java -jar redlockd-server.jar [flags]}: runs until SIGTERM or SIGINT.
 * {@code java -jar redlockd-server.jar healthcheck [flags]}: asks a running server once.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args, new PrintWriter(System.err, true)));
  }

  static int run(String[] args, PrintWriter err) {
    ServerConfig config = new ServerConfig();
    HealthCheckCommand healthCheck = new HealthCheckCommand();
    CommandLine cli = new CommandLine(config).addSubcommand(healthCheck);
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
      config.engineConfig();
      config.accessControl(); // a policy or token file that does not load stops start-up here
      if (!config.devMode()) {
        // localhost and 127.0.0.1 are one node: refused before any node is contacted
        DistinctEndpoints.check(NodeAddress.parseList(config.redis));
      }
    } catch (CommandLine.ParameterException | IllegalArgumentException e) {
      // A bad flag stops start-up with a one-line reason.
      err.println("redlockd: " + e.getMessage() + " (see --help)");
      err.flush();
      return 2;
    }
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
      // One hook, in order: release what the streams hold, then stop the dev Redis nodes.
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
