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
      // Every engine script: a changed script is a new SHA1, and EVALSHA must name what Redis computes.
      for (String name : List.of("acquire", "raise", "settle", "extend", "release", "abandon", "probe", "seed",
          "describe", "acquire_permit", "extend_permits", "describe_permits", "force_release", "quarantine")) {
        LuaScript script = LuaScript.load(dev.redlockd.engine.LockEngine.class, name);
        assertThat(redis.call("SCRIPT", "LOAD", script.source())).as(name).isEqualTo(script.sha1());
      }
    }
  }
}
