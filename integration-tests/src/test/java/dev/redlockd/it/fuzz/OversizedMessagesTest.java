package dev.redlockd.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.redlockd.client.LockTokens;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.Status;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Requests far larger than any real one: past gRPC's 4 MiB inbound limit they are refused
 * before they are read (RESOURCE_EXHAUSTED, which the contract names for a server limit);
 * under it, fields hundreds of kilobytes long get INVALID_ARGUMENT with a short message that
 * does not echo them. The server stays healthy either way.
 */
class OversizedMessagesTest {
  private static final int FIVE_MIB = 5 * 1024 * 1024;
  private static final int HALF_MIB = 512 * 1024;
  private static final java.time.Duration DEADLINE = java.time.Duration.ofSeconds(20);
  private static final Duration TTL = Duration.newBuilder().setSeconds(5).build();
  private static LiveServer h;

  @BeforeAll
  static void start() throws Exception {
    h = new LiveServer(3);
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @AfterEach
  void serverStillServes() {
    ServerChecks.assertServes(h.channel);
  }

  @Test
  void messagesOverTheInboundLimitAreResourceExhaustedOnEveryRpc() throws Exception {
    byte[] huge = new byte[FIVE_MIB];
    new Random(7).nextBytes(huge);
    for (Rpc rpc : Rpc.values()) {
      Status status = RawCall.send(h.channel, rpc, huge, DEADLINE);
      assertThat(status.getCode()).as("%s with 5 MiB: %s", rpc, status).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    }
  }

  @Test
  void hugeFieldsUnderTheLimitAreInvalidArgumentWithAShortMessage() throws Exception {
    String big = "r".repeat(HALF_MIB);
    String token = LockTokens.newToken();
    byte[][] requests = {
        AcquireRequest.newBuilder().setResource(big).setTtl(TTL).build().toByteArray(),
        AcquireRequest.newBuilder().setResource("oversized-owner").setTtl(TTL).setOwner(big).build().toByteArray(),
        AcquireRequest.newBuilder().setResource("oversized-token").setTtl(TTL).setToken(big).build().toByteArray(),
        ExtendRequest.newBuilder().setResource(big).setToken(token).setTtl(TTL).build().toByteArray(),
        ReleaseRequest.newBuilder().setResource("oversized-release").setToken(big).build().toByteArray(),
        KeepAliveRequest.newBuilder().setResource(big).setToken(token).setTtl(TTL).build().toByteArray(),
        DescribeRequest.newBuilder().setResource(big).build().toByteArray(),
    };
    Rpc[] rpcs = {Rpc.ACQUIRE, Rpc.ACQUIRE, Rpc.ACQUIRE, Rpc.EXTEND, Rpc.RELEASE, Rpc.KEEP_ALIVE, Rpc.DESCRIBE};
    for (int i = 0; i < requests.length; i++) {
      Status status = RawCall.send(h.channel, rpcs[i], requests[i], DEADLINE);
      assertThat(status.getCode()).as("request %d (%s): %s", i, rpcs[i], status.getCode())
          .isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(status.getDescription()).as("request %d's message", i).hasSizeLessThan(1024);
    }
  }
}
