package dev.redlockd.testing;

import dev.redlockd.server.dev.RedisBinary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One real redis-server with ACL users, a password or TLS, which the plain {@link RedisCluster}
 * nodes do not have. A password or a TLS-only port makes a bare PING unanswerable, so it counts
 * as started when its log says it accepts connections. {@link #close()} kills it.
 */
public final class SecuredRedis implements AutoCloseable {
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    // An aborted test run must not leave Redis processes behind.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
        "secured-redis-cleanup"));
  }

  private final Process process;
  private final int port;
  private final boolean tls;
  private final Path dir;

  private SecuredRedis(Process process, int port, boolean tls, Path dir) {
    this.process = process;
    this.port = port;
    this.tls = tls;
    this.dir = dir;
  }

  /** A plaintext node; {@code config} are redis-server arguments such as {@code --requirepass s}. */
  public static SecuredRedis plain(Path dir, String... config) {
    return start(dir, false, List.of(config));
  }

  /**
   * A node that speaks TLS only, with this certificate and key, trusting {@code ca} for client
   * certificates; with {@code clientsNeedCertificates} false it asks clients for none. Aborts the
   * test (skipped, with the reason) when the redis-server found was built without TLS.
   */
  public static SecuredRedis tls(Path dir, TestCertificates.Issued server, Path ca, boolean clientsNeedCertificates,
      String... config) {
    List<String> args = new ArrayList<>(List.of("--tls-cert-file", server.cert().toString(),
        "--tls-key-file", server.key().toString(), "--tls-ca-cert-file", ca.toString(),
        "--tls-auth-clients", clientsNeedCertificates ? "yes" : "no"));
    args.addAll(List.of(config));
    return start(dir, true, args);
  }

  private static SecuredRedis start(Path dir, boolean tls, List<String> config) {
    Path binary = RedisBinary.locate();
    IllegalStateException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      int port = freePort();
      Path nodeDir;
      try {
        // A directory of its own: a port used again must not find the last node's log, whose
        // "Ready to accept connections" would pass for the new node's.
        Files.createDirectories(dir);
        nodeDir = Files.createTempDirectory(dir, "redis-" + port + "-");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      try {
        return launch(binary, port, tls, nodeDir, config);
      } catch (IllegalStateException e) {
        last = e;
        if (!logOf(nodeDir).contains("Address already in use")) {
          throw e;
        }
      }
    }
    throw last;
  }

  private static SecuredRedis launch(Path binary, int port, boolean tls, Path dir, List<String> config) {
    Process process;
    try {
      Files.createDirectories(dir);
      List<String> command = new ArrayList<>(List.of(binary.toString(),
          "--port", tls ? "0" : Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
          "--dir", dir.toString(), "--logfile", dir.resolve("redis.log").toString(), "--daemonize", "no"));
      if (tls) {
        command.addAll(List.of("--tls-port", Integer.toString(port)));
      }
      command.addAll(config);
      process = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.log").toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary, e);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!logOf(dir).contains("Ready to accept connections")) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        process.destroyForcibly();
        String log = logOf(dir);
        if (tls && (log.contains("Bad directive") || log.toLowerCase().contains("not supported"))) {
          MissingRuntime.skipOrFail("the redis-server found (" + RedisBinary.describe(binary) + ") was built without TLS: "
              + "install one with TLS (Debian's redis-server has it) to run this test");
        }
        throw new IllegalStateException("redis-server did not start on port " + port + ": " + log);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
    LIVE.add(process);
    return new SecuredRedis(process, port, tls, dir);
  }

  public int port() {
    return port;
  }

  /** The node's URI with this user-info ({@code user:password}, {@code password} or empty for none). */
  public String uri(String userInfo) {
    return (tls ? "rediss://" : "redis://") + (userInfo.isEmpty() ? "" : userInfo + "@") + "127.0.0.1:" + port;
  }

  /** Everything the node logged, to check what clients were refused for. */
  public String log() {
    return logOf(dir);
  }

  private static String logOf(Path dir) {
    StringBuilder all = new StringBuilder();
    for (String name : List.of("redis.log", "stdout.log")) {
      try {
        if (Files.exists(dir.resolve(name))) {
          all.append(Files.readString(dir.resolve(name)));
        }
      } catch (IOException e) {
        // a log still being created reads as empty
      }
    }
    return all.toString();
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    LIVE.remove(process);
    process.destroyForcibly();
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
