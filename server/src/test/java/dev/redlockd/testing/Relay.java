package dev.redlockd.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on loopback to a port that can be changed, as a NAT rule or a DNS name moved to
 * another host: {@link #retarget} cuts the open connections, and new ones reach the new port.
 */
public final class Relay implements AutoCloseable {
  private final ServerSocket listener;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile int targetPort;

  public Relay(int targetPort) {
    this.targetPort = targetPort;
    try {
      this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread acceptor = new Thread(this::accept, "relay-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** New connections go to {@code port}; the open ones are closed. */
  public void retarget(int port) {
    targetPort = port;
    closeAll();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        try {
          Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
          sockets.add(client);
          sockets.add(server);
          pump(client, server);
          pump(server, client);
        } catch (IOException refused) {
          client.close();
        }
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void pump(Socket from, Socket to) throws IOException {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    Thread t = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // closed
      } finally {
        close(from);
        close(to);
      }
    }, "relay-pump");
    t.setDaemon(true);
    t.start();
  }

  private void closeAll() {
    sockets.forEach(Relay::close);
    sockets.clear();
  }

  private static void close(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() {
    try {
      listener.close();
    } catch (IOException e) {
      // already closed
    }
    closeAll();
  }
}
