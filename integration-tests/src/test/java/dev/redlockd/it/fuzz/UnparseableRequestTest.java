package dev.redlockd.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a bug the fuzz tests found: bytes that are not a protobuf request of the
 * method (a truncated or corrupted message, a client built from another version of the proto)
 * used to end with UNKNOWN "Application error processing RPC", a code the contract does not
 * name, because grpc-java's marshaller threw inside the call's executor; and every such call
 * wrote a SEVERE stack trace of about 30 lines to the server's stderr through
 * java.util.logging, past the logback configuration, so any client could fill the log. Now
 * checks what the contract asks of bad input: on every RPC such bytes end with INVALID_ARGUMENT and
 * change nothing, the server keeps serving, and its log gets no stack trace. The server
 * process runs as users run it, so its real output can be read.
 */
class UnparseableRequestTest {
  /** Field 1 (resource) says 8 bytes follow; only 2 do. */
  private static final byte[] TRUNCATED_ACQUIRE = {0x0a, 0x08, 'a', 'b'};
  private static RedisCluster cluster;
  private static ServerProcess server;

  @BeforeAll
  static void start() {
    cluster = RedisCluster.start(3);
    server = ServerProcess.start("--redis", cluster.redisFlag());
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      server.close();
    } finally {
      cluster.close();
    }
  }

  @Test
  void bytesThatAreNotARequestGetInvalidArgumentOnEveryRpc() throws Exception {
    for (Rpc rpc : Rpc.values()) {
      assertThat(rpc.parses(TRUNCATED_ACQUIRE)).isFalse();
      Status status = RawCall.send(server.channel(), rpc, TRUNCATED_ACQUIRE, Duration.ofSeconds(20));
      assertThat(status.getCode()).as("%s with a truncated message: %s", rpc, status)
          .isEqualTo(Status.Code.INVALID_ARGUMENT);
    }
    ServerChecks.assertServes(server.channel());
  }

  @Test
  void bytesThatAreNotARequestLeaveNoStackTraceInTheServerLog() throws Exception {
    for (int i = 0; i < 5; i++) {
      RawCall.send(server.channel(), Rpc.RELEASE, TRUNCATED_ACQUIRE, Duration.ofSeconds(20));
    }
    ServerChecks.assertServes(server.channel()); // a round trip after them: their output is written
    assertThat(server.log()).as("server output after 5 malformed requests")
        .doesNotContain("Exception while executing runnable")
        .doesNotContain("Invalid protobuf byte sequence");
  }
}
