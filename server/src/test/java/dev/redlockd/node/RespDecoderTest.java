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

  @Test
  void garbageEndsTheConnectionInsteadOfBeingGuessedAt() {
    EmbeddedChannel channel = new EmbeddedChannel(new RespDecoder());
    assertThatThrownBy(() -> channel.writeInbound(Unpooled.copiedBuffer("?what\r\n", StandardCharsets.US_ASCII)))
        .isInstanceOf(DecoderException.class);
    // Not finished: the connection is dropped after such an error, never read again.
  }
}
