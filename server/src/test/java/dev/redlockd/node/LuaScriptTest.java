package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.RespClient;
import java.util.List;
import org.junit.jupiter.api.Test;

class LuaScriptTest {

  @Test
  void sha1MatchesWhatRedisComputes() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(1);
        RespClient redis = new RespClient("127.0.0.1", cluster.node(0).port())) {
      for (String name : List.of("acquire", "raise", "extend", "release", "abandon", "probe", "seed", "describe",
          "force_release")) {
        LuaScript script = LuaScript.load(dev.redlockd.engine.LockEngine.class, name);
        assertThat(redis.call("SCRIPT", "LOAD", script.source())).as(name).isEqualTo(script.sha1());
      }
    }
  }
}
