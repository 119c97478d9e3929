package dev.redlockd.node;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The one place Lettuce's replies become what {@link RedisNode} promises, as {@link RespDecoder}
 * makes them for the built-in client: integers Long, simple and bulk strings String, arrays
 * List (nested as sent), nil null. Lettuce's own ObjectOutput does not fit: under RESP2 it
 * gave a top-level integer as a one-element list and failed on a top-level status reply
 * (PING's PONG) with UnsupportedOperationException. Error replies stay
 * Lettuce's (the command fails with them; {@link LettuceFailures} maps them).
 */
final class EngineReplyOutput extends CommandOutput<String, String, Object> {
  /** An array being filled: how many elements it has, and those read so far. */
  private record Partial(int size, List<Object> items) {}

  private final ArrayDeque<Partial> open = new ArrayDeque<>();

  EngineReplyOutput() {
    super(StringCodec.UTF8, null);
  }

  @Override
  public void set(ByteBuffer bytes) {
    add(bytes == null ? null : StandardCharsets.UTF_8.decode(bytes).toString());
  }

  @Override
  public void setSingle(ByteBuffer bytes) {
    set(bytes);
  }

  @Override
  public void set(long integer) {
    add(integer);
  }

  @Override
  public void multi(int count) {
    if (count < 0) {
      add(null); // a nil array
    } else if (count == 0) {
      add(List.of());
    } else {
      open.push(new Partial(count, new ArrayList<>(count)));
    }
  }

  private void add(Object value) {
    Object done = value;
    while (true) {
      Partial array = open.peek();
      if (array == null) {
        output = done;
        return;
      }
      array.items().add(done);
      if (array.items().size() < array.size()) {
        return;
      }
      open.pop();
      done = Collections.unmodifiableList(array.items());
    }
  }
}
