package dev.redlockd.it.chaos;

import dev.redlockd.server.dev.RedisBinary;
import dev.redlockd.testing.RedisCluster;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One chaos run: 5 real redis-server processes, 2 server processes on them, 66 contending
 * clients of three kinds through both, N + 3 workers on a semaphore of N permits
 * ({@link PermitWorkload}), and the nemesis, for the configured time; then every
 * fault is healed, the clients stop, --max-ttl passes, and the checker reads the history.
 * Every process is stopped on the way out, whatever happened.
 */
final class ChaosRun {
  private static final String KEY_PREFIX = "redlock:";

  private ChaosRun() {}

  static ChaosResult run(ChaosConfig config, PrintStream out) throws Exception {
    out.printf("chaos run: %d s, seed %d (repeat with -Dchaos.seed=%d), %d clients, %d resources%n",
        config.duration().toSeconds(), config.seed(), config.seed(), config.clients(), config.resources());
    try (RedisCluster cluster = RedisCluster.start(config.redisNodes());
        Replicas replicas = Replicas.start(config.replicas(), List.of("--redis", cluster.redisFlag(),
            "--max-ttl", config.serverMaxTtl().toMillis() + "ms", "--key-prefix", KEY_PREFIX,
            // -Dchaos.thrifty=true: the same run with thrifty rounds (docs/engine.md)
            "--thrifty-rounds", Boolean.toString(Boolean.getBoolean("chaos.thrifty"))))) {
      try {
        return runOn(config, cluster, replicas, out);
      } catch (Exception | Error e) {
        out.println(replicas.logTails(40));
        throw e;
      } finally {
        cluster.resumeAll(); // a frozen node would make closing the cluster wait
      }
    }
  }

  private static ChaosResult runOn(ChaosConfig config, RedisCluster cluster, Replicas replicas, PrintStream out)
      throws Exception {
    History history = new History();
    FaultTimeline timeline = new FaultTimeline();
    OpenStreams streams = new OpenStreams();
    String loadBefore = ChaosReport.loadAverage();
    long start = System.nanoTime();
    Workload workload = Workload.start(config, replicas, history, streams);
    PermitWorkload permits = PermitWorkload.start(config, replicas, history);
    Nemesis nemesis = new Nemesis(cluster, replicas, timeline, streams, config.seed(), config.serverMaxTtl(), start,
        out);
    nemesis.start();
    try {
      TimeUnit.NANOSECONDS.sleep(config.duration().toNanos());
    } finally {
      try {
        nemesis.stopAndHeal();
      } finally {
        int stuck = workload.stop(Duration.ofSeconds(30)) + permits.stop(Duration.ofSeconds(10));
        if (stuck > 0) {
          history.clientError(stuck + " clients did not finish their round within 30 s of the stop");
        }
      }
    }
    out.printf("t=%6.2fs every fault healed and every client stopped; waiting out --max-ttl%n",
        (System.nanoTime() - start) / 1e9);
    // Every lease a client left behind (abandoned, lost with its replica) runs out by then.
    TimeUnit.NANOSECONDS.sleep(config.serverMaxTtl().plusSeconds(1).toNanos());

    List<Violation> violations = new ArrayList<>(new Checker(config.quorum(), start).check(history, timeline));
    violations.addAll(LeftoverLocks.check(cluster, replicas, config.resourceNames(), KEY_PREFIX));
    List<PermitSection> permitSections = permits.sections();
    violations.addAll(new PermitChecker(PermitWorkload.PERMITS).check(permitSections));
    violations.addAll(PermitWorkload.leftover(cluster, KEY_PREFIX));
    int permitsAtOnce = permits.mostAtOnce();
    out.printf("semaphore phase: %d permit sections by %d workers on %d permits, at most %d at once%n",
        permitSections.size(), PermitWorkload.PERMITS + 3, PermitWorkload.PERMITS, permitsAtOnce);
    Figures figures = Figures.of(history, timeline, config.redisNodes(), config.quorum());
    String markdown = ChaosReport.markdown(config, workload.clientsByKind(), nemesis.injected(), figures, history,
        violations, RedisBinary.describe(RedisBinary.locate()), loadBefore, ChaosReport.loadAverage());
    out.println(markdown);
    if (config.reportFile().isPresent()) {
      Files.createDirectories(config.reportFile().get().toAbsolutePath().getParent());
      Files.writeString(config.reportFile().get(), markdown);
      out.println("figures written to " + config.reportFile().get());
    }
    if (!violations.isEmpty() || !history.clientErrors().isEmpty()) {
      out.println(replicas.logTails(60));
    }
    return new ChaosResult(config, violations, figures, nemesis.injected(), history.grantsByKind(),
        history.clientErrors(), markdown, permitSections.size(), permitsAtOnce);
  }
}
