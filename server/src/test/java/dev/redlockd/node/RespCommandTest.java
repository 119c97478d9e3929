package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RespCommandTest {
  @Test
  void encodesLengthsOfEveryNumberOfDigitsAndCountsUtf8Bytes() {
    String tenChars = "0123456789";
    String longPart = "x".repeat(123_456);
    ByteBuf out = RespCommand.encode(UnpooledByteBufAllocator.DEFAULT, List.of("SET", "", tenChars, "é€", longPart));
    try {
      assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(
          "*5\r\n$3\r\nSET\r\n$0\r\n\r\n$10\r\n0123456789\r\n$5\r\né€\r\n$123456\r\n" + longPart + "\r\n");
    } finally {
      out.release();
    }
  }

  @Test
  void appendsCommandsOneAfterAnotherInOneBuffer() {
    ByteBuf out = Unpooled.buffer(4);
    try {
      RespCommand.encode(out, List.of("PING"));
      RespCommand.encode(out, List.of("GET", "k"));
      assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    } finally {
      out.release();
    }
  }
}
