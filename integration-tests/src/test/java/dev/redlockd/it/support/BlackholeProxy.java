package dev.redlockd.it.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay on loopback that can turn into a black hole: once {@link #blackhole()} is
 * called, bytes in both directions are read and dropped, as a partition or a powered-off host
 * would do, without closing anything (no FIN, no RST reaches either end). {@link #restore()}
 * ends the partition: the connections it dropped bytes of are closed (their streams lost bytes
 * midway, as connections that outlived a long partition are reset), and new ones are forwarded.
 */
public final class BlackholeProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final int targetPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean dropping;
  /** Raised by each {@link #restore()}: a connection accepted under an older one only drops. */
  private final AtomicInteger generation = new AtomicInteger();

  public BlackholeProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "blackhole-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  public void blackhole() {
    dropping = true;
  }

  /** Forwards again, for new connections; the connections open now are closed. */
  public void restore() throws IOException {
    // A connection is listed before it reads its generation: every one of an older generation is in
    // the copy taken after the raise, and is closed.
    generation.incrementAndGet();
    List<Socket> before = List.copyOf(sockets);
    dropping = false;
    for (Socket s : before) {
      sockets.remove(s);
      s.close();
    }
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        sockets.add(client);
        sockets.add(server);
        int born = generation.get();
        pump(client, server, born);
        pump(server, client, born);
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void pump(Socket from, Socket to, int born) throws IOException {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    Thread t = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          if (!dropping && born == generation.get()) {
            out.write(buffer, 0, n);
            out.flush();
          }
        }
      } catch (IOException closed) {
        // the test is over
      }
    }, "blackhole-pump");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    listener.close();
    for (Socket s : sockets) {
      s.close();
    }
  }
}
