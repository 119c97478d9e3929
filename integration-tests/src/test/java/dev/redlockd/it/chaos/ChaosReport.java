package dev.redlockd.it.chaos;

import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Renders a run's figures as the Markdown table that docs/reliability.md quotes. */
final class ChaosReport {
  private ChaosReport() {}

  static String markdown(ChaosConfig config, Map<ClientKind, Integer> clients, Map<Nemesis.Fault, Integer> faults,
      Figures f, History history, List<Violation> violations, String redisBinary, String loadBefore,
      String loadAfter) {
    Map<ClientKind, Long> grants = history.grantsByKind();
    List<String> clientErrors = history.clientErrors();
    StringBuilder md = new StringBuilder();
    md.append("## Chaos run: ").append(config.duration().toSeconds()).append(" s, seed ").append(config.seed())
        .append("\n\n");
    // The marker above the code block is docs/README.md's convention (DocCodeBlocksTest).
    md.append("<!-- untested: the command that made this report; ten minutes long, not part of the suite -->\n");
    md.append("```sh\n").append(command(config)).append("\n```\n\n");
    md.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
        .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.arch"))
        .append(", Java ").append(System.getProperty("java.version")).append(", ").append(redisBinary)
        .append(". Date: ").append(LocalDate.now()).append(".\n")
        .append("Load average (1, 5, 15 min) before the run: ").append(loadBefore).append("; after: ").append(loadAfter)
        .append(" (everything, Redis nodes, servers and clients, shares these cores).\n\n");
    md.append("| figure | value |\n| --- | --- |\n");
    row(md, "clients", config.clients() + " (" + join(clients) + ") over " + config.replicas()
        + " server processes, " + config.resources() + " resources, ttl " + config.minTtl().toMillis() + "-"
        + config.maxTtl().toMillis() + " ms");
    row(md, "Redis nodes", config.redisNodes() + " (quorum " + config.quorum() + "), server --max-ttl "
        + config.serverMaxTtl().toSeconds() + " s, other flags default");
    row(md, "faults injected", join(faults));
    row(md, "**violations found**", violations.isEmpty() ? "**0**" : "**" + violations.size() + "**");
    row(md, "Acquire calls", f.acquireCalls() + " (" + join(f.acquiresByCode()) + ")");
    row(md, "grants", grants.values().stream().mapToLong(Long::longValue).sum() + " (" + join(grants) + ")");
    row(md, "critical sections", f.sections() + ", of which " + f.sectionsOverran()
        + " ran past their holder's own deadline (simulated pauses and late notice)");
    row(md, "writes to the protected resources", f.writesAccepted() + " accepted, " + f.writesRefused()
        + " refused by fencing (" + f.writesRefusedStale() + " of them from holders past their deadline)");
    row(md, "grants already past the holder's deadline when it first looked (granted after waiting longer than the"
        + " validity; not used)", orZero(history.expiredOnArrival()));
    row(md, "Extend calls (raw clients)", orZero(history.extendOutcomes()));
    row(md, "leases lost, as heard by their holders", orZero(history.leasesLost()));
    row(md, "Acquire calls answered (granted or ABORTED) while a quorum of nodes was fault-free and the replica up",
        percent(f.answeredShareWithQuorum()) + " (" + f.answeredWithQuorum() + " of " + f.callsWithQuorum() + ")");
    row(md, "... of which granted", percent(f.grantedShareWithQuorum()) + " (" + f.grantedWithQuorum() + ")");
    row(md, "release to next grant of the resource, median / p99",
        ms(Figures.percentile(f.handoffAfterReleaseMs(), 50)) + " / "
            + ms(Figures.percentile(f.handoffAfterReleaseMs(), 99)) + " (" + f.handoffAfterReleaseMs().size()
            + " confirmed releases)");
    row(md, "replica SIGKILLed: kill to next grant of a resource kept alive on it",
        f.handoffAfterReplicaKillMs().isEmpty() ? "none measured"
            : f.handoffAfterReplicaKillMs().stream().map(ChaosReport::ms).collect(Collectors.joining(", "))
                + " (median " + ms(Figures.percentile(f.handoffAfterReplicaKillMs(), 50)) + ")");
    row(md, "client errors outside the contract", clientErrors.isEmpty() ? "0" : Integer.toString(clientErrors.size()));
    if (!violations.isEmpty()) {
      md.append("\nViolations:\n\n");
      violations.forEach(v -> md.append("- ").append(v).append('\n'));
    }
    if (!clientErrors.isEmpty()) {
      md.append("\nClient errors (first 10):\n\n");
      clientErrors.stream().limit(10).forEach(e -> md.append("- ").append(e).append('\n'));
    }
    return md.toString();
  }

  /** The first three fields of /proc/loadavg, or "unknown" off Linux. */
  static String loadAverage() {
    try {
      String[] fields = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim().split("\\s+");
      return fields[0] + ", " + fields[1] + ", " + fields[2];
    } catch (java.io.IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static String command(ChaosConfig config) {
    return "mvn -B verify -pl integration-tests -am -Dit.test=ChaosIT -Dchaos.seconds="
        + config.duration().toSeconds() + " -Dchaos.seed=" + config.seed()
        + " -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false";
  }

  private static void row(StringBuilder md, String figure, String value) {
    md.append("| ").append(figure).append(" | ").append(value).append(" |\n");
  }

  private static String join(Map<?, ? extends Number> counts) {
    return counts.entrySet().stream()
        .map(e -> e.getKey().toString().toLowerCase().replace('_', ' ') + " " + e.getValue())
        .collect(Collectors.joining(", "));
  }

  private static String orZero(Map<String, Long> counts) {
    return counts.isEmpty() ? "0" : join(counts);
  }

  private static String percent(double share) {
    return Double.isNaN(share) ? "n/a" : String.format("%.1f %%", share * 100);
  }

  private static String ms(double millis) {
    return Double.isNaN(millis) ? "n/a" : String.format("%.0f ms", millis);
  }
}
