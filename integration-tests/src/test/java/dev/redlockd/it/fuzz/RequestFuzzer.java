package dev.redlockd.it.fuzz;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import dev.redlockd.client.LockTokens;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.ForceReleaseRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import dev.redlockd.proto.v1.ReleaseRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Seeded generators of bad requests: random bytes, truncated and bit-flipped encodings of
 * good requests, well-formed wire data with random fields, and real request messages whose
 * fields take edge values. The same seed gives the same requests.
 */
final class RequestFuzzer {
  private static final String BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  private static final String ODD = "+/= .*{}:\u0000\n\t%é€😀";
  private static final long[] SECONDS = {0, 1, -1, 2, 9, 10, 11, 3600, Long.MAX_VALUE, Long.MIN_VALUE,
      315_576_000_000L, 315_576_000_001L, -315_576_000_001L};
  private static final int[] NANOS = {0, 1, -1, 5_000_000, 10_000_000, 999_999_999, 1_000_000_000, -1_000_000_000,
      Integer.MAX_VALUE, Integer.MIN_VALUE};

  private final Random random;

  RequestFuzzer(long seed) {
    this.random = new Random(seed);
  }

  byte[] randomBytes() {
    byte[] bytes = new byte[random.nextInt(10) == 0 ? random.nextInt(4096) : random.nextInt(64)];
    random.nextBytes(bytes);
    return bytes;
  }

  /** A good request cut short: lengths and varints end mid-way. */
  byte[] truncated(Rpc rpc) {
    byte[] whole = goodRequest(rpc).toByteArray();
    return Arrays.copyOf(whole, whole.length == 0 ? 0 : random.nextInt(whole.length));
  }

  /** A good request with one to three bits flipped. */
  byte[] bitFlipped(Rpc rpc) {
    byte[] bytes = goodRequest(rpc).toByteArray();
    for (int i = 1 + random.nextInt(3); i > 0 && bytes.length > 0; i--) {
      bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
    }
    return bytes;
  }

  /**
   * Well-formed protobuf wire data with random fields: known field numbers with the right or a
   * wrong wire type, unknown ones, nested garbage in length-delimited fields.
   */
  byte[] randomWire() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(buffer);
    try {
      for (int fields = random.nextInt(6); fields > 0; fields--) {
        int number = random.nextInt(4) == 0 ? 1 + random.nextInt(536_870_911) : 1 + random.nextInt(6);
        switch (random.nextInt(4)) {
          case 0 -> out.writeUInt64(number, random.nextLong());
          case 1 -> out.writeFixed32(number, random.nextInt());
          case 2 -> out.writeFixed64(number, random.nextLong());
          default -> {
            byte[] payload = random.nextBoolean() ? randomText().getBytes(StandardCharsets.UTF_8) : randomBytes();
            out.writeByteArray(number, payload);
          }
        }
      }
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buffer.toByteArray();
  }

  /** A real request of the RPC whose fields take random and edge values. */
  Message randomFields(Rpc rpc) {
    return switch (rpc) {
      case ACQUIRE -> {
        AcquireRequest.Builder b = AcquireRequest.newBuilder().setResource(resource()).setOwner(owner())
            .setToken(token());
        maybe(() -> b.setTtl(duration()));
        maybe(() -> b.setWait(waitDuration()));
        yield b.build();
      }
      case EXTEND -> {
        ExtendRequest.Builder b = ExtendRequest.newBuilder().setResource(resource()).setToken(token());
        maybe(() -> b.setTtl(duration()));
        yield b.build();
      }
      case RELEASE -> ReleaseRequest.newBuilder().setResource(resource()).setToken(token()).build();
      case KEEP_ALIVE -> {
        KeepAliveRequest.Builder b = KeepAliveRequest.newBuilder().setResource(resource()).setToken(token());
        maybe(() -> b.setTtl(duration()));
        yield b.build();
      }
      case DESCRIBE -> DescribeRequest.newBuilder().setResource(resource()).build();
      case FORCE_RELEASE -> ForceReleaseRequest.newBuilder().setResource(resource()).build();
    };
  }

  /** One to three messages for a stream, or exactly one for a unary call. */
  List<byte[]> messages(Rpc rpc, java.util.function.Supplier<byte[]> one) {
    int count = rpc.streaming() ? 1 + random.nextInt(3) : 1;
    return java.util.stream.Stream.generate(one).limit(count).toList();
  }

  private Message goodRequest(Rpc rpc) {
    Duration ttl = Duration.newBuilder().setSeconds(5).build();
    String resource = "fuzz-" + random.nextInt(1000);
    String token = LockTokens.newToken();
    return switch (rpc) {
      case ACQUIRE -> AcquireRequest.newBuilder().setResource(resource).setTtl(ttl).setOwner("fuzzer pid 1")
          .setToken(token).build();
      case EXTEND -> ExtendRequest.newBuilder().setResource(resource).setToken(token).setTtl(ttl).build();
      case RELEASE -> ReleaseRequest.newBuilder().setResource(resource).setToken(token).build();
      case KEEP_ALIVE -> KeepAliveRequest.newBuilder().setResource(resource).setToken(token).setTtl(ttl).build();
      case DESCRIBE -> DescribeRequest.newBuilder().setResource(resource).build();
      case FORCE_RELEASE -> ForceReleaseRequest.newBuilder().setResource(resource).build();
    };
  }

  private String resource() {
    return switch (random.nextInt(6)) {
      case 0 -> "";
      case 1 -> "x".repeat(512 + random.nextInt(3) - 1);
      case 2 -> "é".repeat(256 + random.nextInt(2));
      default -> "fuzz-" + randomText();
    };
  }

  private String owner() {
    return random.nextInt(4) == 0 ? "ö".repeat(120 + random.nextInt(20)) : randomText();
  }

  private String token() {
    return switch (random.nextInt(5)) {
      case 0 -> "";
      case 1 -> LockTokens.newToken();
      case 2 -> pick(BASE64URL, 21 + random.nextInt(45)); // around both length limits
      default -> pick(BASE64URL + ODD, random.nextInt(80));
    };
  }

  /** A ttl: often within 10 ms .. 10 s (the server's bounds in these tests), often not. */
  private Duration duration() {
    if (random.nextBoolean()) {
      return Duration.newBuilder().setSeconds(random.nextInt(11)).setNanos(random.nextInt(1_000_000_000)).build();
    }
    return Duration.newBuilder()
        .setSeconds(SECONDS[random.nextInt(SECONDS.length)])
        .setNanos(NANOS[random.nextInt(NANOS.length)])
        .build();
  }

  /** A wait: short enough not to hold a call for long when valid, or malformed. */
  private Duration waitDuration() {
    if (random.nextBoolean()) {
      return Duration.newBuilder().setNanos(random.nextInt(200_000_000)).build();
    }
    return duration();
  }

  private String randomText() {
    StringBuilder s = new StringBuilder();
    for (int i = random.nextInt(40); i > 0; i--) {
      int kind = random.nextInt(10);
      if (kind < 6) {
        s.append((char) (' ' + random.nextInt(95)));
      } else if (kind < 8) {
        s.append(ODD.charAt(random.nextInt(ODD.length())));
      } else {
        s.appendCodePoint(random.nextInt(0x10FFFF - 0x10000) + 0x10000);
      }
    }
    return s.toString();
  }

  private String pick(String alphabet, int length) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < length; i++) {
      s.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return s.toString();
  }

  private void maybe(Runnable set) {
    if (random.nextInt(5) != 0) {
      set.run();
    }
  }
}
