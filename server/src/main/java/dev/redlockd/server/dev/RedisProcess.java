package dev.redlockd.server.dev;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One local redis-server on 127.0.0.1 that keeps nothing on disk, so a restart brings it
 * back empty. Tests use {@link #pause()} (SIGSTOP) and {@link #restart()} to inject faults.
 */
public final class RedisProcess implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RedisProcess.class);
  private static final Set<RedisProcess> LIVE = ConcurrentHashMap.newKeySet();
  /** Run by the exit hook before it kills the processes (JVM shutdown hooks have no order). */
  private static final List<Runnable> BEFORE_EXIT_KILL = new java.util.concurrent.CopyOnWriteArrayList<>();

  static {
    // An aborted test run or a killed dev server must not leave Redis processes behind.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      BEFORE_EXIT_KILL.forEach(Runnable::run);
      LIVE.forEach(RedisProcess::close);
    }, "redis-process-cleanup"));
  }

  /**
   * Work that still needs these Redis processes when the JVM exits (a dev server releasing
   * the leases of its KeepAlive streams), run by the exit hook before it kills them.
   */
  public static void beforeExitKill(Runnable work) {
    BEFORE_EXIT_KILL.add(work);
  }

  private final Path binary;
  private final int port;
  private final Path dir;
  private final List<String> extraArgs;
  private Process process; // guarded by this
  private boolean paused; // guarded by this

  private RedisProcess(Path binary, int port, Path dir, List<String> extraArgs) {
    this.binary = binary;
    this.port = port;
    this.dir = dir;
    this.extraArgs = List.copyOf(extraArgs);
  }

  public static RedisProcess start(Path binary, Path dir) {
    IllegalStateException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        return start(binary, freePort(), dir, List.of());
      } catch (IllegalStateException e) {
        last = e; // the free port was taken in between: try another
      }
    }
    throw last;
  }

  public static RedisProcess start(Path binary, int port, Path dir, List<String> extraArgs) {
    RedisProcess redis = new RedisProcess(binary, port, dir, extraArgs);
    redis.launch();
    LIVE.add(redis);
    return redis;
  }

  public int port() {
    return port;
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  public synchronized long pid() {
    return process.pid();
  }

  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** SIGSTOP: the process keeps its sockets but answers nothing, like a node behind a partition. */
  public synchronized void pause() {
    signal("STOP");
    paused = true;
  }

  /** SIGCONT. */
  public synchronized void resume() {
    if (paused) {
      signal("CONT");
      paused = false;
    }
  }

  /** SIGKILL. */
  public synchronized void kill() {
    if (process != null && process.isAlive()) {
      if (paused) {
        signal("CONT");
        paused = false;
      }
      process.destroyForcibly();
      waitForExit(5);
    }
  }

  /** Kills it and starts it again on the same port: it comes back empty. */
  public synchronized void restart() {
    kill();
    launch();
  }

  @Override
  public synchronized void close() {
    kill();
    LIVE.remove(this);
  }

  private void launch() {
    try {
      Files.createDirectories(dir);
      List<String> command = new ArrayList<>(List.of(binary.toString(),
          "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
          "--dir", dir.toString(), "--pidfile", dir.resolve("redis.pid").toString(),
          "--logfile", dir.resolve("redis.log").toString(), "--daemonize", "no", "--protected-mode", "no"));
      command.addAll(extraArgs);
      process = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.log").toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary, e);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!answersPing()) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        process.destroyForcibly();
        throw new IllegalStateException("redis-server did not start on port " + port + ": " + logTail());
      }
      sleep(20);
    }
    log.info("started redis-server on 127.0.0.1:{} (pid {})", port, process.pid());
  }

  private boolean answersPing() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
      socket.setSoTimeout(500);
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] reply = in.readNBytes(7);
      return new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n");
    } catch (IOException e) {
      return false;
    }
  }

  private void signal(String name) {
    if (process == null || !process.isAlive()) {
      return;
    }
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
          .redirectErrorStream(true)
          .start();
      if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private void waitForExit(int seconds) {
    try {
      process.waitFor(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(dir.resolve("redis.log"));
      lines.addAll(Files.exists(dir.resolve("stdout.log")) ? Files.readAllLines(dir.resolve("stdout.log")) : List.of());
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public String toString() {
    return "redis-server 127.0.0.1:" + port;
  }
}
