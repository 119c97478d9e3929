package dev.redlockd.bench;

import java.net.URI;
import java.util.List;
import redis.clients.jedis.Jedis;

/** Between systems: every node emptied, so no system finds another's keys or memory use. */
final class RedisAdmin {
  private RedisAdmin() {}

  static void flushAll(List<String> uris) {
    for (String u : uris) {
      try (Jedis jedis = connect(u)) {
        jedis.flushAll();
      }
    }
  }

  static String version(String uri) {
    try (Jedis jedis = connect(uri)) {
      for (String line : jedis.info("server").split("\r?\n")) {
        if (line.startsWith("redis_version:")) {
          return line.substring("redis_version:".length()).trim();
        }
      }
    }
    return "unknown";
  }

  /**
   * What the nodes have done since they started, all together: script calls (EVALSHA, EVAL,
   * FCALL; INFO commandstats, where the commands a script runs are counted apart) and reads
   * from their clients' sockets (INFO stats' total_reads_processed: one per read, however many
   * commands it carried). Counts, so the same on a loaded machine as on a quiet one for the same
   * work, unlike CPU time; reads per script say how deep the pipelining was.
   */
  record Work(long scripts, long reads) {}

  static Work work(List<String> uris) {
    long scripts = 0;
    long reads = 0;
    for (String u : uris) {
      try (Jedis jedis = connect(u)) {
        for (String line : jedis.info("commandstats").split("\r?\n")) {
          if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")
              || line.startsWith("cmdstat_fcall:")) {
            scripts += Long.parseLong(line.replaceAll("^[^:]*:calls=(\\d+),.*", "$1"));
          }
        }
        for (String line : jedis.info("stats").split("\r?\n")) {
          if (line.startsWith("total_reads_processed:")) {
            reads += Long.parseLong(line.substring("total_reads_processed:".length()).trim());
          }
        }
      }
    }
    return new Work(scripts, reads);
  }

  private static Jedis connect(String uri) {
    URI u = URI.create(uri);
    return new Jedis(u.getHost(), u.getPort());
  }
}
