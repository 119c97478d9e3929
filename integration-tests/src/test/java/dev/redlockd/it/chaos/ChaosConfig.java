package dev.redlockd.it.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a chaos run does, from system properties so the same test runs for 60 s in the suite
 * and for longer by hand:
 * {@code -Dchaos.seconds} (60), {@code -Dchaos.seed} (random, printed), {@code -Dchaos.clients}
 * (66), {@code -Dchaos.resources} (4), {@code -Dchaos.report} (a Markdown file for the figures;
 * a relative path is taken from the repository root).
 *
 * @param minTtl smallest ttl a client asks for
 * @param maxTtl largest ttl a client asks for
 * @param serverMaxTtl the servers' --max-ttl: how long a node that restarted empty sits out,
 *     and how long after the last client stopped no lock may be left
 */
record ChaosConfig(long seed, Duration duration, int clients, int resources, Duration minTtl, Duration maxTtl,
    Duration serverMaxTtl, int redisNodes, int replicas, Optional<Path> reportFile) {

  static ChaosConfig fromSystemProperties() {
    long seed = Long.getLong("chaos.seed", new java.security.SecureRandom().nextLong());
    Duration duration = Duration.ofSeconds(Long.getLong("chaos.seconds", 60));
    int clients = Integer.getInteger("chaos.clients", 66);
    int resources = Integer.getInteger("chaos.resources", 4);
    String report = System.getProperty("chaos.report", "");
    Optional<Path> reportFile = report.isBlank() ? Optional.empty() : Optional.of(fromRepositoryRoot(report));
    return new ChaosConfig(seed, duration, clients, resources, Duration.ofMillis(300), Duration.ofSeconds(2),
        Duration.ofSeconds(3), 5, 2, reportFile);
  }

  List<String> resourceNames() {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < resources; i++) {
      names.add("chaos-" + i);
    }
    return names;
  }

  int quorum() {
    return redisNodes / 2 + 1;
  }

  /** Failsafe runs in the module's directory; a report path is meant from the repository root. */
  private static Path fromRepositoryRoot(String path) {
    Path p = Path.of(path);
    if (p.isAbsolute()) {
      return p;
    }
    Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
    for (Path d = dir; d != null; d = d.getParent()) {
      if (Files.isDirectory(d.resolve("integration-tests")) && Files.isRegularFile(d.resolve("pom.xml"))) {
        return d.resolve(p);
      }
    }
    return dir.resolve(p);
  }
}
