package dev.redlockd.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A minimal RESP client for test assertions, independent of the Jedis code under test. */
public final class RespClient implements AutoCloseable {
  private final Socket socket;
  private final OutputStream out;
  private final InputStream in;
  /** Commands sent but not yet written: they leave together at the next {@link #receive()}. */
  private final ByteArrayOutputStream unsent = new ByteArrayOutputStream();

  public RespClient(String host, int port) throws IOException {
    this(host, port, 2000);
  }

  public RespClient(String host, int port, int timeoutMillis) throws IOException {
    socket = new Socket();
    socket.connect(new InetSocketAddress(host, port), timeoutMillis);
    socket.setSoTimeout(timeoutMillis);
    out = socket.getOutputStream();
    in = new BufferedInputStream(socket.getInputStream());
  }

  /** An error reply inside an array (a script's own reply in a batch): the rest of the array still follows. */
  public record ErrorReply(String message) {}

  /**
   * Sends one command; returns String, Long, null or List; throws on an error reply (one inside
   * an array is an {@link ErrorReply} element).
   */
  public Object call(String... args) throws IOException {
    send(args);
    return receive();
  }

  /**
   * Queues one command: the commands queued before a {@link #receive()} leave in one write, as
   * a pipeline, and their replies are then read in the order they were queued.
   */
  public void send(String... args) throws IOException {
    unsent.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
    for (String arg : args) {
      byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
      unsent.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
      unsent.write(bytes);
      unsent.write("\r\n".getBytes(StandardCharsets.UTF_8));
    }
  }

  /** The next reply, as {@link #call} returns it, after writing whatever was queued. */
  public Object receive() throws IOException {
    if (unsent.size() > 0) {
      out.write(unsent.toByteArray());
      out.flush();
      unsent.reset();
    }
    return read(false);
  }

  private Object read(boolean nested) throws IOException {
    int type = in.read();
    String line = line();
    switch (type) {
      case '+':
        return line;
      case '-':
        if (nested) {
          return new ErrorReply(line);
        }
        throw new IOException("redis error: " + line);
      case ':':
        return Long.parseLong(line);
      case '$': {
        int len = Integer.parseInt(line);
        if (len < 0) {
          return null;
        }
        byte[] data = in.readNBytes(len);
        in.readNBytes(2);
        return new String(data, StandardCharsets.UTF_8);
      }
      case '*': {
        int n = Integer.parseInt(line);
        if (n < 0) {
          return null;
        }
        List<Object> items = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          items.add(read(true));
        }
        return items;
      }
      default:
        throw new IOException("unexpected RESP type " + type);
    }
  }

  private String line() throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != '\r') {
      if (c < 0) {
        throw new IOException("connection closed");
      }
      buf.write(c);
    }
    in.read(); // \n
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
