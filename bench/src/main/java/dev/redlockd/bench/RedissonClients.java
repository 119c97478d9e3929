package dev.redlockd.bench;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Redisson as its documentation sets it up: one single-server client per node, defaults otherwise. */
final class RedissonClients {
  private RedissonClients() {}

  static RedissonClient singleServer(String uri) {
    Config config = new Config();
    config.useSingleServer().setAddress(uri);
    return Redisson.create(config);
  }
}
