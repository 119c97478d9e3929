package dev.redlockd.bench;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A one-member etcd on loopback with a temporary data directory, started from the {@code etcd}
 * on PATH (Debian: apt-get install etcd-server). Ports are picked free so a developer's own
 * etcd on 2379 is left alone.
 */
final class EtcdProcess implements AutoCloseable {
  private final Process process;
  private final Path dir;
  private final String endpoint;
  private final String version;

  private EtcdProcess(Process process, Path dir, String endpoint, String version) {
    this.process = process;
    this.dir = dir;
    this.endpoint = endpoint;
    this.version = version;
  }

  static Optional<Path> binary() {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String d : path.split(File.pathSeparator)) {
      Path candidate = Path.of(d, "etcd");
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  static EtcdProcess start(Path binary) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("redlockd-bench-etcd");
    int client = freePort();
    int peer = freePort();
    String clientUrl = "http://127.0.0.1:" + client;
    String peerUrl = "http://127.0.0.1:" + peer;
    Path log = dir.resolve("etcd.log");
    Process process = new ProcessBuilder(binary.toString(), "--name", "e1", "--data-dir", dir.resolve("data").toString(),
        "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
        "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
        "--initial-cluster", "e1=" + peerUrl)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      String text = Files.readString(log, StandardCharsets.UTF_8);
      if (text.contains("ready to serve client requests")) {
        return new EtcdProcess(process, dir, clientUrl, version(binary));
      }
      if (!process.isAlive()) {
        break;
      }
      Thread.sleep(50);
    }
    process.destroyForcibly();
    throw new IllegalStateException("etcd did not start: " + Files.readString(log, StandardCharsets.UTF_8));
  }

  String endpoint() {
    return endpoint;
  }

  String version() {
    return version;
  }

  long pid() {
    return process.pid();
  }

  private static String version(Path binary) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(10, TimeUnit.SECONDS);
    return out.lines().filter(l -> l.startsWith("etcd Version:")).map(l -> l.substring(13).trim())
        .findFirst().orElse("unknown");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  @Override
  public void close() throws IOException {
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
  }
}
