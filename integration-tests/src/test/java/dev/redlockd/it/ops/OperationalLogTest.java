package dev.redlockd.it.ops;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Scrape;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What an operator reads in the real server's log when Redis nodes fail and come back, and
 * when a kept lease is lost: one line per change, never a token or a password.
 */
class OperationalLogTest {

  @Test
  void nodeChangesAndLostLeasesAreLoggedOnceEachWithoutSecrets() throws Exception {
    String password = "pw-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(12));
    try (RedisCluster cluster = RedisCluster.start(3)) {
      // Node 0 asks for a password; node 1 will restart empty (so it must not need one).
      cluster.call(0, "CONFIG", "SET", "requirepass", password);
      List<String> names = cluster.uris().stream().map(uri -> uri.substring("redis://".length())).toList();
      String redis = "redis://:" + password + "@" + names.get(0) + ",redis://" + names.get(1)
          + ",redis://" + names.get(2);
      int metricsPort = MetricsEndpointTest.freePort();
      // A short max-ttl keeps the quarantine of the emptied node short; a roomy node timeout keeps a
      // busy test machine from flapping a healthy node.
      try (ServerProcess server = ServerProcess.start("--redis", redis, "--max-ttl", "3s",
          "--node-timeout", "250ms", "--metrics-port", Integer.toString(metricsPort))) {
        LockServiceGrpc.LockServiceBlockingStub blocking = LockServiceGrpc.newBlockingStub(server.channel());

        // A kept lease that its holder loses: the lock key vanishes from two of the three nodes.
        Lease lease = blocking.acquire(acquireRequest("ops-log-kept", Duration.ofSeconds(3), Duration.ZERO, ""))
            .getLease();
        KeptStream stream = KeptStream.keep(LockServiceGrpc.newStub(server.channel()), "ops-log-kept",
            lease.getToken(), Duration.ofSeconds(3));
        cluster.call(1, "DEL", "redlock:{ops-log-kept}:lock");
        cluster.call(2, "DEL", "redlock:{ops-log-kept}:lock");
        assertThat(stream.awaitEnd(Duration.ofSeconds(10)).getCode()).isEqualTo(Status.Code.NOT_FOUND);
        awaitLine(server, "kept lease lost");

        // Frozen, then thawed.
        cluster.pause(0);
        awaitLine(server, "Redis node " + names.get(0) + " is down");
        cluster.resume(0);
        awaitLine(server, "Redis node " + names.get(0) + " is up again");

        // Killed, then back empty: quarantined until max-ttl has passed, then it rejoins.
        cluster.kill(1);
        awaitLine(server, "Redis node " + names.get(1) + " is down");
        cluster.restart(1);
        awaitLine(server, "Redis node " + names.get(1) + " is quarantined");
        awaitLine(server, "Redis node " + names.get(1) + " rejoined");

        String body = Scrape.of(metricsPort).text();
        assertThat(body).contains("node=\"" + names.get(0) + "\"").doesNotContain(password);

        String log = server.log();
        assertThat(count(log, "kept lease lost")).isEqualTo(1);
        assertThat(lineWith(log, "kept lease lost")).contains("INFO").contains("ops-log-kept").contains("NOT_FOUND");
        assertThat(count(log, "Redis node " + names.get(0) + " is down")).isEqualTo(1);
        assertThat(count(log, "Redis node " + names.get(0) + " is up again")).isEqualTo(1);
        assertThat(count(log, "Redis node " + names.get(1) + " is down")).isEqualTo(1);
        assertThat(count(log, "Redis node " + names.get(1) + " is quarantined")).isEqualTo(1);
        assertThat(count(log, "Redis node " + names.get(1) + " rejoined")).isEqualTo(1);
        assertThat(count(log, "Redis node " + names.get(2) + " is down")).isZero();
        assertThat(lineWith(log, names.get(0) + " is up again")).contains("INFO");
        assertThat(lineWith(log, names.get(1) + " rejoined")).contains("INFO");
        // A node found empty may be new as well as restarted: the line says what is known.
        assertThat(lineWith(log, names.get(1) + " is quarantined")).contains("an empty node")
            .containsPattern("votes again in \\d+ ms \\(at \\d{4}-\\d\\d-\\d\\dT[0-9:]+Z\\)");
        assertThat(log).doesNotContain(password).doesNotContain(lease.getToken());
      }
    }
  }

  private static void awaitLine(ServerProcess server, String text) {
    await().atMost(Duration.ofSeconds(15)).until(() -> server.log().contains(text));
  }

  private static int count(String log, String text) {
    return (int) Pattern.compile(Pattern.quote(text)).matcher(log).results().count();
  }

  private static String lineWith(String log, String text) {
    return log.lines().filter(l -> l.contains(text)).findFirst().orElseThrow();
  }
}
