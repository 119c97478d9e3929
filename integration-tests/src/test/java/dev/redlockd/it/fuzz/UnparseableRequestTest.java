package dev.redlockd.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Found by the fuzz tests: bytes that are not a protobuf request of the method (a truncated
 * or corrupted message, a client built from another version of the proto) end with UNKNOWN
 * "Application error processing RPC", a code the contract does not name, and every such call
 * writes a SEVERE stack trace of about 30 lines to the server's stderr through
 * java.util.logging, past the logback configuration: any client can fill the log. SPEC: bad
 * input gets a clear error (INVALID_ARGUMENT) and changes nothing. The server process runs as
 * users run it, so its real output can be read.
 */
@Disabled("bug, open: a request whose bytes do not parse ends UNKNOWN (grpc-java marshaller) and logs a stack trace; the contract wants INVALID_ARGUMENT")
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
