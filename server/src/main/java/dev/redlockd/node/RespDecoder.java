package dev.redlockd.node;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Turns RESP2 replies into what {@link RedisNode} promises: integers as Long, simple and bulk
 * strings as String, arrays as List, errors as {@link RedisErrorReply}, nil as {@link #NIL}
 * (Netty passes no nulls down a pipeline). A reply split across reads is parsed again from
 * its start once more bytes came: the replies redlockd reads are small, so this is cheaper
 * than keeping a parser's state.
 */
final class RespDecoder extends ByteToMessageDecoder {
  /** A nil bulk string or array at the top level. */
  static final Object NIL = new Object() {
    @Override
    public String toString() {
      return "NIL";
    }
  };
  private static final Object INCOMPLETE = new Object();
  /** Larger than anything redlockd's scripts answer; a corrupt length ends the connection instead. */
  private static final int MAX_BULK = 64 << 20;

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    int start = in.readerIndex();
    Object reply = parse(in);
    if (reply == INCOMPLETE) {
      in.readerIndex(start);
      return;
    }
    out.add(reply == null ? NIL : reply);
  }

  /** One reply from the reader index on, or INCOMPLETE; nil is null. */
  static Object parse(ByteBuf in) {
    if (!in.isReadable()) {
      return INCOMPLETE;
    }
    byte type = in.readByte();
    int lineEnd = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) '\n');
    if (lineEnd < 0) {
      return INCOMPLETE;
    }
    int lineStart = in.readerIndex();
    int lineLength = lineEnd - lineStart - 1; // without the \r
    if (lineLength < 0 || in.getByte(lineEnd - 1) != '\r') {
      throw new DecoderException("RESP line without CRLF");
    }
    switch (type) {
      case '+':
        return line(in, lineLength);
      case '-':
        return new RedisErrorReply(line(in, lineLength));
      case ':':
        return number(in, lineLength);
      case '$': {
        long length = number(in, lineLength);
        if (length < 0) {
          return null;
        }
        if (length > MAX_BULK) {
          throw new DecoderException("RESP bulk string of " + length + " bytes");
        }
        if (in.readableBytes() < length + 2) {
          return INCOMPLETE;
        }
        String value = in.readCharSequence((int) length, StandardCharsets.UTF_8).toString();
        in.skipBytes(2);
        return value;
      }
      case '*': {
        long count = number(in, lineLength);
        if (count < 0) {
          return null;
        }
        if (count > MAX_BULK) {
          throw new DecoderException("RESP array of " + count + " elements");
        }
        List<Object> items = new ArrayList<>((int) Math.min(count, 1024));
        for (long i = 0; i < count; i++) {
          Object item = parse(in);
          if (item == INCOMPLETE) {
            return INCOMPLETE;
          }
          items.add(item);
        }
        return Collections.unmodifiableList(items);
      }
      default:
        throw new DecoderException("not a RESP2 reply type: " + (char) type);
    }
  }

  private static String line(ByteBuf in, int length) {
    String text = in.readCharSequence(length, StandardCharsets.UTF_8).toString();
    in.skipBytes(2);
    return text;
  }

  private static long number(ByteBuf in, int length) {
    long value = 0;
    boolean negative = false;
    for (int i = 0; i < length; i++) {
      byte b = in.readByte();
      if (i == 0 && b == '-') {
        negative = true;
      } else if (b >= '0' && b <= '9') {
        value = value * 10 + (b - '0');
      } else {
        throw new DecoderException("not a RESP integer");
      }
    }
    in.skipBytes(2);
    return negative ? -value : value;
  }
}
