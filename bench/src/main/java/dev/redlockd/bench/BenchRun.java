package dev.redlockd.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Everything one LockCycleBench run found, filled in as it goes and rendered by {@link Report}. */
final class BenchRun {
  static final String REDLOCKD = "redlockd";
  /** The same server jar started with --thrifty-rounds, on the same nodes, in the same run. */
  static final String REDLOCKD_THRIFTY = "redlockd, thrifty rounds";
  static final String JEDIS_REDLOCK = "Redlock over JedisPool (in process)";
  static final String REDISSON_REDLOCK = "RedissonRedLock";
  static final String REDISSON_LOCK = "Redisson RLock (1 node)";
  static final String ETCD = "etcd";
  static final String FLOOR = "one-node floor";
  static final String ECHO = "gRPC echo";
  /** The order of the rows, whatever the order of measurement. */
  static final List<String> ROWS = List.of(REDLOCKD, REDLOCKD_THRIFTY, JEDIS_REDLOCK, REDISSON_REDLOCK, REDISSON_LOCK, ETCD, FLOOR, ECHO);

  String commandLine;
  String date;
  String commit;
  String cpuModel;
  int cores;
  String os;
  String jvm;
  String redis;
  String etcd;
  String loadBefore;
  String loadAfter;
  /** CPU steal over the whole run, percent of the cores' time (/proc/stat). */
  double stealPercent;
  List<String> busyAtStart = List.of();
  List<Integer> levels;
  int warmUpSeconds;
  int systemWarmUpSeconds;
  int systemWarmUpMaxSeconds;
  int secondsPerPoint;
  final Map<String, String> how = new LinkedHashMap<>();
  final Map<String, Map<Integer, ClosedLoop.Point>> points = new LinkedHashMap<>();
  final List<String> notes = new ArrayList<>();
  HandOff.Result handOff;
  /** Clients over two servers: with release notices, and with --notify-waiters false. */
  HandOff.Across handOffAcross;
  HandOff.Across handOffAcrossSilent;
  KeepAliveFigures keepAlive;
  double totalSeconds;

  void add(ClosedLoop.Point p) {
    points.computeIfAbsent(p.system(), s -> new TreeMap<>()).put(p.inFlight(), p);
  }

  ClosedLoop.Point point(String system, int inFlight) {
    Map<Integer, ClosedLoop.Point> bySystem = points.get(system);
    return bySystem == null ? null : bySystem.get(inFlight);
  }
}
