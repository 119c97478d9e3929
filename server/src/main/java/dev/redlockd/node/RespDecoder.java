package dev.redlockd.node;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.RandomAccess;

/**
 * Turns RESP2 replies into what {@link RedisNode} promises: integers as Long, simple and bulk
 * strings as String, arrays as List, errors as {@link RedisErrorReply}, nil as {@link #NIL}
 * (Netty passes no nulls down a pipeline).
 *
 * <p>The arrays a reply is in the middle of are kept across reads, so a reply split over many
 * reads is read once, not again from its start on every read; only the one element cut short
 * is read again. Anything that is not RESP2 as Redis writes it (an unknown type, a line or
 * bulk string not ended by CRLF, a number that is not one, nesting deeper than any reply of
 * ours, a line longer than any) is a {@link MalformedReplyException}, and the connection ends.
 */
final class RespDecoder extends ByteToMessageDecoder {
  /** What the node sent is not RESP2; nothing read on this connection after it can be trusted. */
  static final class MalformedReplyException extends DecoderException {
    MalformedReplyException(String message) {
      super(message);
    }
  }

  /** A nil bulk string or array at the top level. */
  static final Object NIL = new Object() {
    @Override
    public String toString() {
      return "NIL";
    }
  };
  private static final Object INCOMPLETE = new Object();
  /** Larger than anything redlockd's scripts answer; a corrupt length ends the connection instead. */
  static final int MAX_BULK = 64 << 20;
  static final int MAX_ELEMENTS = 1 << 20;
  /** Our deepest reply is an array of arrays; anything much deeper is not from our scripts. */
  static final int MAX_DEPTH = 8;
  /** Status, error and number lines are short; a line this long without CRLF is not RESP. */
  static final int MAX_LINE = 64 << 10;

  /**
   * An array reply: while its elements are read, the one being filled; once full, the
   * unmodifiable list handed on. One object and its element array per reply, where a builder,
   * an ArrayList and an unmodifiable view of it were four (every node's answer to every script
   * call is an array).
   */
  private static final class RespArray extends AbstractList<Object> implements RandomAccess {
    private final int size;
    /** Grown as elements come: a corrupt length must not allocate its worth up front. */
    private Object[] items;
    private int filled;

    RespArray(int size) {
      this.size = size;
      this.items = new Object[Math.min(size, 1024)];
    }

    /** Adds the next element; true once every element is in. */
    boolean fill(Object item) {
      if (filled == items.length) {
        items = Arrays.copyOf(items, Math.min(size, items.length * 2));
      }
      items[filled++] = item;
      return filled == size;
    }

    @Override
    public Object get(int index) {
      return items[java.util.Objects.checkIndex(index, filled)];
    }

    @Override
    public int size() {
      return filled;
    }
  }

  private final ArrayDeque<RespArray> open = new ArrayDeque<>();

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    while (true) {
      int start = in.readerIndex();
      Object value = element(in);
      if (value == INCOMPLETE) {
        in.readerIndex(start);
        return;
      }
      if (value instanceof RespArray header) { // element() returns only empty ones: a header
        if (open.size() == MAX_DEPTH) {
          throw new MalformedReplyException("RESP arrays nested deeper than " + MAX_DEPTH);
        }
        open.push(header);
        continue;
      }
      while (true) {
        RespArray array = open.peek();
        if (array == null) {
          out.add(value == null ? NIL : value);
          break;
        }
        if (!array.fill(value)) {
          break;
        }
        open.pop();
        value = array;
      }
    }
  }

  /**
   * One element from the reader index on: a scalar (nil is null), the empty list, a
   * {@link RespArray} yet to be filled when an array header was read, or INCOMPLETE when its bytes have not all come (the caller then resets the reader index).
   */
  private static Object element(ByteBuf in) {
    if (!in.isReadable()) {
      return INCOMPLETE;
    }
    int lineEnd = in.indexOf(in.readerIndex(), Math.min(in.writerIndex(), in.readerIndex() + MAX_LINE), (byte) '\n');
    if (lineEnd < 0) {
      if (in.readableBytes() >= MAX_LINE) {
        throw new MalformedReplyException("RESP line longer than " + MAX_LINE + " bytes");
      }
      return INCOMPLETE;
    }
    byte type = in.readByte();
    int lineLength = lineEnd - in.readerIndex() - 1; // without the \r
    if (lineLength < 0 || in.getByte(lineEnd - 1) != '\r') {
      throw new MalformedReplyException("RESP line without CRLF");
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
          return nil(length);
        }
        if (length > MAX_BULK) {
          throw new MalformedReplyException("RESP bulk string of " + length + " bytes");
        }
        if (in.readableBytes() < length + 2) {
          return INCOMPLETE;
        }
        String value = in.readCharSequence((int) length, StandardCharsets.UTF_8).toString();
        crlf(in, "bulk string");
        return value;
      }
      case '*': {
        long count = number(in, lineLength);
        if (count < 0) {
          return nil(count);
        }
        if (count > MAX_ELEMENTS) {
          throw new MalformedReplyException("RESP array of " + count + " elements");
        }
        return count == 0 ? List.of() : new RespArray((int) count);
      }
      default:
        throw new MalformedReplyException("not a RESP2 reply type: 0x" + Integer.toHexString(type & 0xff));
    }
  }

  private static Object nil(long length) {
    if (length != -1) {
      throw new MalformedReplyException("RESP length " + length);
    }
    return null;
  }

  private static String line(ByteBuf in, int length) {
    String text = in.readCharSequence(length, StandardCharsets.UTF_8).toString();
    in.skipBytes(2);
    return text;
  }

  private static void crlf(ByteBuf in, String after) {
    if (in.readByte() != '\r' || in.readByte() != '\n') {
      throw new MalformedReplyException("RESP " + after + " not followed by CRLF");
    }
  }

  private static long number(ByteBuf in, int length) {
    if (length == 0 || length > 20) {
      throw new MalformedReplyException("not a RESP integer");
    }
    long value = 0;
    boolean negative = false;
    for (int i = 0; i < length; i++) {
      byte b = in.readByte();
      if (i == 0 && b == '-' && length > 1) {
        negative = true;
      } else if (b >= '0' && b <= '9') {
        try {
          value = Math.addExact(Math.multiplyExact(value, 10), negative ? -(b - '0') : b - '0');
        } catch (ArithmeticException e) {
          throw new MalformedReplyException("RESP integer out of range");
        }
      } else {
        throw new MalformedReplyException("not a RESP integer");
      }
    }
    in.skipBytes(2);
    return value;
  }
}
