package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** RESP2 replies as the node client reads them, whole and cut anywhere. */
class RespDecoderTest {
  /** Every reply type redlockd meets, including a nested array with a nil and non-ASCII text. */
  private static final String WIRE = "+OK\r\n"
      + "-NOSCRIPT No matching script. Please use EVAL.\r\n"
      + ":-42\r\n"
      + "$4\r\nh\u00e9l\r\n"
      + "$-1\r\n"
      + "*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n:0\r\n"
      + "*0\r\n";

  private static List<Object> decode(byte[]... chunks) {
    EmbeddedChannel channel = new EmbeddedChannel(new RespDecoder());
    List<Object> replies = new ArrayList<>();
    for (byte[] chunk : chunks) {
      channel.writeInbound(Unpooled.wrappedBuffer(chunk));
      Object reply;
      while ((reply = channel.readInbound()) != null) {
        replies.add(reply);
      }
    }
    channel.finishAndReleaseAll();
    return replies;
  }

  private static void assertExpected(List<Object> replies) {
    assertThat(replies).hasSize(7);
    assertThat(replies.get(0)).isEqualTo("OK");
    assertThat(replies.get(1)).isInstanceOf(RedisErrorReply.class);
    assertThat(((RedisErrorReply) replies.get(1)).kind()).isEqualTo("NOSCRIPT");
    assertThat(replies.get(2)).isEqualTo(-42L);
    assertThat(replies.get(3)).isEqualTo("h\u00e9l");
    assertThat(replies.get(4)).isSameAs(RespDecoder.NIL);
    assertThat(replies.get(5)).isEqualTo(Arrays.asList(1L, Arrays.asList("a", null), 0L));
    assertThat(replies.get(6)).isEqualTo(List.of());
  }

  @Test
  void decodesEveryReplyTypeInOneRead() {
    assertExpected(decode(WIRE.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void decodesTheSameWhenCutAtEveryByte() {
    byte[] wire = WIRE.getBytes(StandardCharsets.UTF_8);
    for (int cut = 1; cut < wire.length; cut++) {
      assertExpected(decode(Arrays.copyOfRange(wire, 0, cut), Arrays.copyOfRange(wire, cut, wire.length)));
    }
    byte[][] oneByteEach = new byte[wire.length][];
    for (int i = 0; i < wire.length; i++) {
      oneByteEach[i] = new byte[] {wire[i]};
    }
    assertExpected(decode(oneByteEach));
  }

  /** Feeds the chunks; returns the replies, or the DecoderException that ended the stream. */
  private static Object decodeOrFailure(List<byte[]> chunks) {
    EmbeddedChannel channel = new EmbeddedChannel(new RespDecoder());
    List<Object> replies = new ArrayList<>();
    try {
      for (byte[] chunk : chunks) {
        channel.writeInbound(Unpooled.wrappedBuffer(chunk));
        Object reply;
        while ((reply = channel.readInbound()) != null) {
          replies.add(reply);
        }
      }
      channel.finishAndReleaseAll();
      return replies;
    } catch (DecoderException e) {
      channel.releaseInbound(); // the connection is dropped after such an error, never read again
      return e;
    }
  }

  private static List<byte[]> cutRandomly(byte[] wire, Random random) {
    List<byte[]> chunks = new ArrayList<>();
    int at = 0;
    while (at < wire.length) {
      int next = Math.min(wire.length, at + 1 + random.nextInt(12));
      chunks.add(Arrays.copyOfRange(wire, at, next));
      at = next;
    }
    return chunks;
  }

  @Test
  void randomBytesGiveRepliesOrADecoderExceptionAndNothingElse() {
    Random random = new Random(20261124);
    byte[] alphabet = "+-:$*\r\n0123456789-abc\u00e9".getBytes(StandardCharsets.UTF_8);
    int failures = 0;
    for (int run = 0; run < 20_000; run++) {
      byte[] wire = new byte[1 + random.nextInt(64)];
      for (int i = 0; i < wire.length; i++) {
        wire[i] = random.nextInt(4) == 0 ? (byte) random.nextInt(256) : alphabet[random.nextInt(alphabet.length)];
      }
      // Any other exception (an index out of bounds, a number format, a stack overflow) fails the test.
      if (decodeOrFailure(cutRandomly(wire, random)) instanceof DecoderException) {
        failures++;
      }
    }
    assertThat(failures).as("random streams refused").isPositive();
  }

  @Test
  void truncatedRepliesWaitForTheRestWhereverTheyAreCut() {
    Random random = new Random(7);
    byte[] wire = WIRE.getBytes(StandardCharsets.UTF_8);
    for (int run = 0; run < 2_000; run++) {
      int cut = random.nextInt(wire.length);
      Object partial = decodeOrFailure(cutRandomly(Arrays.copyOfRange(wire, 0, cut), random));
      assertThat(partial).as("a prefix is never malformed").isInstanceOf(List.class);
      assertThat((List<?>) partial).hasSizeLessThan(7);
      assertExpected(decode(cutRandomly(wire, random).toArray(byte[][]::new)));
    }
  }

  @Test
  void malformedRepliesEndTheStream() {
    for (String bad : List.of(
        "$3\r\nabcXY",                  // a bulk string not followed by CRLF
        "$-2\r\n",                      // no such length
        ":12a\r\n",                     // not a number
        ":\r\n",                        // no digits
        ":-\r\n",                       // a sign alone
        ":99999999999999999999\r\n",    // past a long
        "+OK\n",                         // LF without CR
        "*1\r\n".repeat(RespDecoder.MAX_DEPTH + 1) + ":1\r\n", // nested too deep
        "*" + (RespDecoder.MAX_ELEMENTS + 1) + "\r\n",
        "$" + (RespDecoder.MAX_BULK + 1) + "\r\n",
        "+" + "x".repeat(RespDecoder.MAX_LINE + 10))) { // a line with no end
      assertThat(decodeOrFailure(List.of(bad.getBytes(StandardCharsets.UTF_8))))
          .as("%s", bad.length() > 40 ? bad.substring(0, 40) + "..." : bad)
          .isInstanceOf(DecoderException.class);
    }
  }

  @Test
  void arraysAsDeepAsAllowedStillDecode() {
    String wire = "*1\r\n".repeat(RespDecoder.MAX_DEPTH) + ":1\r\n";
    Object reply = decode(wire.getBytes(StandardCharsets.UTF_8)).get(0);
    for (int i = 0; i < RespDecoder.MAX_DEPTH; i++) {
      assertThat(reply).isInstanceOf(List.class);
      reply = ((List<?>) reply).get(0);
    }
    assertThat(reply).isEqualTo(1L);
  }

  @Test
  void garbageEndsTheConnectionInsteadOfBeingGuessedAt() {
    EmbeddedChannel channel = new EmbeddedChannel(new RespDecoder());
    assertThatThrownBy(() -> channel.writeInbound(Unpooled.copiedBuffer("?what\r\n", StandardCharsets.US_ASCII)))
        .isInstanceOf(DecoderException.class);
    // Not finished: the connection is dropped after such an error, never read again.
  }
}
