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

  private static Jedis connect(String uri) {
    URI u = URI.create(uri);
    return new Jedis(u.getHost(), u.getPort());
  }
}
