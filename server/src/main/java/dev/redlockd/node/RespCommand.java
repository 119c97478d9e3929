package dev.redlockd.node;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** A command as RESP2 puts it on the wire: an array of bulk strings. */
final class RespCommand {
  private RespCommand() {}

  static ByteBuf encode(ByteBufAllocator alloc, List<String> parts) {
    int size = 16;
    for (String part : parts) {
      size += 16 + ByteBufUtil.utf8MaxBytes(part);
    }
    ByteBuf out = alloc.buffer(size);
    header(out, '*', parts.size());
    for (String part : parts) {
      header(out, '$', ByteBufUtil.utf8Bytes(part));
      ByteBufUtil.writeUtf8(out, part);
      out.writeByte('\r').writeByte('\n');
    }
    return out;
  }

  private static void header(ByteBuf out, char type, int number) {
    out.writeByte(type);
    out.writeCharSequence(Integer.toString(number), StandardCharsets.US_ASCII);
    out.writeByte('\r').writeByte('\n');
  }
}
