package dev.redlockd.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import io.grpc.Status;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Random, truncated, bit-flipped and oddly-valued requests to every RPC, over a real socket to
 * the real server on 3 real redis-server processes. Every call must end with a code the
 * contract names (or the RPC's own, see {@link Rpc#allowed()}) (bytes that are not a request at all included: INVALID_ARGUMENT, see
 * {@link UnparseableRequestTest}); and afterwards the server must still be healthy.
 * {@code -Dfuzz.seed} repeats a run; the seed is in every failure message.
 */
class MalformedRequestsTest {
  private static final long SEED = Long.getLong("fuzz.seed", 0x5EED_F0C5L);
  private static final int CALLS_PER_RPC = 200;
  /** Generous: a valid random Acquire may wait up to 200 ms, and the machine may be loaded. */
  private static final Duration DEADLINE = Duration.ofSeconds(5);
  private static LiveServer h;

  @BeforeAll
  static void start() throws Exception {
    // ForceRelease allowed, so that its requests reach validation and the nodes rather than
    // being refused unread; the fuzzed resources are never the ones the health checks lock.
    h = new LiveServer(3, "--max-ttl", "10s", "--allow-force-release");
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
  void randomBytes() throws Exception {
    RequestFuzzer fuzz = new RequestFuzzer(SEED);
    fuzzEveryRpc("random bytes", rpc -> fuzz.messages(rpc, fuzz::randomBytes));
  }

  @Test
  void truncatedGoodRequests() throws Exception {
    RequestFuzzer fuzz = new RequestFuzzer(SEED + 1);
    fuzzEveryRpc("truncated", rpc -> fuzz.messages(rpc, () -> fuzz.truncated(rpc)));
  }

  @Test
  void bitFlippedGoodRequests() throws Exception {
    RequestFuzzer fuzz = new RequestFuzzer(SEED + 2);
    fuzzEveryRpc("bit-flipped", rpc -> fuzz.messages(rpc, () -> fuzz.bitFlipped(rpc)));
  }

  @Test
  void wellFormedWireDataWithRandomFields() throws Exception {
    RequestFuzzer fuzz = new RequestFuzzer(SEED + 3);
    fuzzEveryRpc("random wire fields", rpc -> fuzz.messages(rpc, fuzz::randomWire));
  }

  @Test
  void realRequestsWithRandomAndEdgeFieldValues() throws Exception {
    RequestFuzzer fuzz = new RequestFuzzer(SEED + 4);
    int[] parsed = {0};
    fuzzEveryRpc("random field values", rpc -> fuzz.messages(rpc, () -> {
      parsed[0]++;
      return fuzz.randomFields(rpc).toByteArray();
    }));
    assertThat(parsed[0]).isGreaterThanOrEqualTo(Rpc.values().length * CALLS_PER_RPC);
  }

  /**
   * Sends {@link #CALLS_PER_RPC} generated calls to each RPC and fails with every distinct
   * outcome outside the contract, each with an example request in hex.
   */
  private static void fuzzEveryRpc(String what, Function<Rpc, List<byte[]>> requests) throws Exception {
    Map<String, String> outside = new LinkedHashMap<>();
    Map<Status.Code, Integer> seen = new java.util.EnumMap<>(Status.Code.class);
    for (Rpc rpc : Rpc.values()) {
      for (int i = 0; i < CALLS_PER_RPC; i++) {
        List<byte[]> messages = requests.apply(rpc);
        Status status = RawCall.send(h.channel, rpc, messages, DEADLINE);
        seen.merge(status.getCode(), 1, Integer::sum);
        if (!rpc.allowed().contains(status.getCode())) {
          outside.putIfAbsent(rpc + " " + status.getCode() + " " + status.getDescription(),
              messages.stream().map(MalformedRequestsTest::hex).toList().toString());
        }
      }
    }
    System.out.printf("%s: %s (seed %d)%n", what, seen, SEED);
    assertThat(outside)
        .as("seed %d, %s: outcomes outside the contract, each with an example request (hex)", SEED, what)
        .isEmpty();
  }

  private static String hex(byte[] bytes) {
    String hex = HexFormat.of().formatHex(bytes);
    return hex.length() <= 160 ? hex : hex.substring(0, 160) + "... (" + bytes.length + " bytes)";
  }
}
