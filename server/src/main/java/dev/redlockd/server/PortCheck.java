package dev.redlockd.server;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Binds the gRPC and metrics ports once, before any Redis node is contacted, so that a port in
 * use stops start-up with its flag and reason instead of after the nodes were probed (and, on a
 * new cluster, written to). The sockets are closed again at once: the servers bind for real
 * moments later.
 */
final class PortCheck {
  private PortCheck() {}

  /** Throws IllegalArgumentException with a one-line reason naming the flag. */
  static void check(InetAddress bind, int port, int metricsPort) {
    free("--port", bind, port);
    free("--metrics-port", bind, metricsPort);
  }

  private static void free(String flag, InetAddress bind, int port) {
    if (port == 0) {
      return; // a free port picked at bind time, or no metrics
    }
    try (ServerSocket socket = new ServerSocket()) {
      // As the servers bind: a port in TIME_WAIT after a restart is not "in use".
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(bind, port));
    } catch (BindException e) {
      throw new IllegalArgumentException(flag + " " + port + ": " + reason(e, bind.getHostAddress()));
    } catch (IOException e) {
      throw new IllegalArgumentException(flag + " " + port + ": cannot listen on " + bind.getHostAddress() + ": "
          + e.getMessage());
    }
  }

  private static String reason(BindException e, String bind) {
    String message = String.valueOf(e.getMessage());
    if (message.startsWith("Address already in use")) {
      return "address already in use (on " + bind + ")";
    }
    if (message.startsWith("Permission denied")) {
      return "permission denied (ports below 1024 need privileges)";
    }
    if (message.startsWith("Cannot assign requested address")) {
      return "cannot listen on " + bind + ", which is not an address of this machine (--bind)";
    }
    return message + " (on " + bind + ")";
  }
}
