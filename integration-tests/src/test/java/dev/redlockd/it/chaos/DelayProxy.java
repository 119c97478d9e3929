package dev.redlockd.it.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP relay on loopback that can hold back the bytes going from the server to the client by
 * a fixed delay, in order, as a congested link, a slow middlebox or a client stuck in GC would:
 * the answers still arrive, late.
 */
final class DelayProxy implements AutoCloseable {
  private record Chunk(long releaseAtNanos, byte[] bytes) {}

  private final ServerSocket listener;
  private final int targetPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile long delayNanos;

  DelayProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    daemon(this::accept, "delay-accept");
  }

  int port() {
    return listener.getLocalPort();
  }

  /** From now on, bytes from the server reach the client this much later (never earlier than bytes before them). */
  void delayAnswers(java.time.Duration delay) {
    delayNanos = delay.toNanos();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        sockets.add(client);
        sockets.add(server);
        relay(client, server, false);
        relay(server, client, true);
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void relay(Socket from, Socket to, boolean delayed) throws IOException {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    daemon(() -> {
      byte[] buffer = new byte[16 * 1024];
      try {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          long delay = delayed ? delayNanos : 0;
          queue.add(new Chunk(System.nanoTime() + delay, Arrays.copyOf(buffer, n)));
        }
      } catch (IOException closed) {
        // the test is over
      }
    }, "delay-read");
    daemon(() -> {
      try {
        while (true) {
          Chunk chunk = queue.take();
          long wait = chunk.releaseAtNanos() - System.nanoTime();
          if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
          }
          out.write(chunk.bytes());
          out.flush();
        }
      } catch (IOException | InterruptedException closed) {
        // the test is over
      }
    }, "delay-write");
  }

  private static void daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
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
