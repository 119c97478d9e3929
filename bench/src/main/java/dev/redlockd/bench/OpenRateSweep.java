package dev.redlockd.bench;

import dev.redlockd.server.dev.DevCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code KeepAliveLoad --open-rate R1,R2,...}: how fast streams may open (a restart storm: the
 * holders of a replica that restarted all come back at once through the others). For each
 * rate, a fresh server on the same Redis nodes; the curve is what became of the streams.
 */
final class OpenRateSweep {
  private OpenRateSweep() {}

  /** What became of one rate's streams. */
  record Row(int rate, int streams, int opened, int refusedStreams, long refusals, int lost, int neverOpened,
      String acquireTimes, double openSeconds, GcPauses gc, String loadAtStart) {
    String tableRow() {
      return String.format(Locale.ROOT, "| %,d | %,d | %,d | %,d (%,d refusals) | %,d | %,d | %s | %.1f s | %s | %s |",
          rate, streams, opened, refusedStreams, refusals, lost, neverOpened, acquireTimes, openSeconds, gc.describe(),
          loadAtStart);
    }
  }

  static final String HEADER = """
      | open rate (streams/s) | streams | opened and kept | refused early (streams, refusals) | lost | never opened | Acquire round trip (granted) | time to open all | server young-GC pauses | load average at start |
      | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
      """;

  static String table(List<Row> rows) {
    StringBuilder t = new StringBuilder(HEADER);
    for (Row r : rows) {
      t.append(r.tableRow()).append('\n');
    }
    return t.toString();
  }

  static List<Integer> parseRates(String value) {
    List<Integer> rates = new ArrayList<>();
    for (String part : value.split(",")) {
      int r = Integer.parseInt(part.trim());
      if (r <= 0) {
        throw new IllegalArgumentException("--open-rate takes positive rates, not " + r);
      }
      rates.add(r);
    }
    return rates;
  }

  /** Runs every rate in turn; passes when no point lost a lease. */
  static boolean run(KeepAliveLoad load) throws Exception {
    String loadBefore = Machine.loadAverage();
    long[] stealBefore = MachineCpu.readSteal();
    List<Row> rows = new ArrayList<>();
    String redis;
    Path dir = Files.createTempDirectory("keepalive-open-rate");
    try (DevCluster cluster = DevCluster.start(load.nodes())) {
      redis = "redis-server " + RedisAdmin.version(cluster.uris().get(0)) + " (" + cluster.binaryDescription() + ")";
      for (int rate : load.openRates()) {
        rows.add(load.forRate(rate).openRatePoint(cluster, dir));
        Machine.settle(30); // the JIT backlog of a saturating point must not count against the next
      }
    } finally {
      KeepAliveLoad.deleteTree(dir);
    }
    double steal = MachineCpu.stealShare(stealBefore, MachineCpu.readSteal());
    String table = table(rows);
    System.out.println();
    System.out.println(table);
    boolean pass = rows.stream().allMatch(r -> r.lost() == 0);
    System.out.println(pass ? "PASS: no lease lost at any rate" : "FAIL: leases lost, see the table");
    if (load.write() != null) {
      KeepAliveDoc.writeSweep(load.write(), new KeepAliveDoc.Sweep(load.streams(), load.ttlMs(), load.seconds(),
          load.nodes(), load.openRates(), load.warmupSeconds(), redis, loadBefore, Machine.loadAverage(),
          String.format(Locale.ROOT, "%.1f %%", 100 * steal), table));
      System.out.println("wrote " + KeepAliveCharts.write(load.write()));
    }
    return pass;
  }

  static String rates(List<Integer> rates) {
    return String.join(",", rates.stream().map(String::valueOf).toList());
  }

  static List<Integer> ratesOf(int... rates) {
    return Arrays.stream(rates).boxed().toList();
  }
}
