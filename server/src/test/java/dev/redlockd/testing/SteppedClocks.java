package dev.redlockd.testing;

import dev.redlockd.server.dev.RedisBinary;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Real redis-server nodes whose wall clocks a test steps at run time, as an NTP step, a resumed
 * VM or a hand-set date would: each runs with {@code clockshim.c} (beside this class in the test
 * resources) preloaded, which adds an offset read from a file to CLOCK_REALTIME, gettimeofday
 * and time. The shim is built with gcc once per JVM into the module's target directory. Without
 * gcc, or with a redis-server that ignores LD_PRELOAD, the test is skipped saying so (and fails
 * under CI=true, see {@link MissingRuntime}). The nodes keep nothing on disk; {@link #close()}
 * kills them (so does the JVM's exit).
 */
public final class SteppedClocks implements AutoCloseable {
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
  private static Path library;

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "stepped-clocks"));
  }

  private final Path dir;
  private final List<Process> processes = new ArrayList<>();
  private final List<Integer> ports = new ArrayList<>();
  private final long[] offsetMicros;

  private SteppedClocks(int n) throws IOException {
    Path shim = library();
    this.dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "stepped-clocks");
    this.offsetMicros = new long[n];
    Path binary = RedisBinary.locate();
    try {
      for (int i = 0; i < n; i++) {
        Path nodeDir = dir.resolve("node-" + i);
        Files.createDirectories(nodeDir);
        writeOffset(nodeDir, 0);
        launch(binary, shim, nodeDir);
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  private void launch(Path binary, Path shim, Path nodeDir) throws IOException {
    int port;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    ProcessBuilder builder = new ProcessBuilder(binary.toString(), "--port", Integer.toString(port), "--bind",
        "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", nodeDir.toString(), "--protected-mode", "no",
        "--logfile", nodeDir.resolve("redis.log").toString())
        .redirectErrorStream(true)
        .redirectOutput(nodeDir.resolve("stdout.log").toFile());
    builder.environment().put("LD_PRELOAD", shim.toString());
    builder.environment().put("REDLOCKD_CLOCK_OFFSET_FILE", nodeDir.resolve("offset").toString());
    Process process = builder.start();
    LIVE.add(process);
    processes.add(process);
    ports.add(port);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try (RespClient client = new RespClient("127.0.0.1", port, 500)) {
        if ("PONG".equals(client.call("PING"))) {
          return;
        }
      } catch (IOException e) {
        if (!process.isAlive() || System.nanoTime() > deadline) {
          throw new IllegalStateException("redis-server under the clock shim did not start on port " + port + ": "
              + Files.readString(nodeDir.resolve("stdout.log")), e);
        }
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
  }

  /** {@code n} nodes, their clocks where the machine's is. */
  public static SteppedClocks start(int n) {
    try {
      SteppedClocks clocks = new SteppedClocks(n);
      clocks.step(0, Duration.ofMillis(1)); // a node that ignores the shim is found before the test relies on it
      clocks.step(0, Duration.ofMillis(-1));
      return clocks;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public int size() {
    return ports.size();
  }

  public List<String> uris() {
    return ports.stream().map(port -> "redis://127.0.0.1:" + port).toList();
  }

  /**
   * Steps node {@code i}'s wall clock by {@code by} (negative: back), and returns once the node's
   * TIME shows it.
   */
  public void step(int i, Duration by) throws IOException {
    offsetMicros[i] += TimeUnit.NANOSECONDS.toMicros(by.toNanos());
    writeOffset(dir.resolve("node-" + i), offsetMicros[i]);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (Math.abs(nodeMicros(i) - wallMicros() - offsetMicros[i]) > TimeUnit.MILLISECONDS.toMicros(500)) {
      if (System.nanoTime() > deadline) {
        MissingRuntime.skipOrFail("redis-server " + RedisBinary.locate() + " ignores the LD_PRELOAD clock shim "
            + "(statically linked?): install Debian's redis-server");
      }
      Thread.onSpinWait();
    }
  }

  /** What node {@code i}'s TIME reads now, in microseconds. */
  public long nodeMicros(int i) throws IOException {
    List<?> time = (List<?>) call(i, "TIME");
    return Long.parseLong(String.valueOf(time.get(0))) * 1_000_000 + Long.parseLong(String.valueOf(time.get(1)));
  }

  public Object call(int i, String... command) throws IOException {
    try (RespClient client = new RespClient("127.0.0.1", ports.get(i))) {
      return client.call(command);
    }
  }

  @Override
  public void close() {
    for (Process process : processes) {
      process.destroyForcibly();
      try {
        process.waitFor(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      LIVE.remove(process);
    }
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort: target/ is cleaned by the next build
    }
  }

  private static long wallMicros() {
    return TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
  }

  /** Replaced, not rewritten: the shim reads the file again when it is a new one. */
  private static void writeOffset(Path nodeDir, long micros) throws IOException {
    Path next = nodeDir.resolve("offset.next");
    Files.writeString(next, Long.toString(micros), StandardCharsets.US_ASCII);
    Files.move(next, nodeDir.resolve("offset"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** The shim, built once per JVM. */
  private static synchronized Path library() throws IOException {
    if (library != null) {
      return library;
    }
    Path built = Path.of(System.getProperty("java.io.tmpdir")).resolve("clockshim");
    Files.createDirectories(built);
    Path source = built.resolve("clockshim.c");
    try (InputStream in = SteppedClocks.class.getResourceAsStream("clockshim.c")) {
      Files.copy(in, source, StandardCopyOption.REPLACE_EXISTING);
    }
    Path so = built.resolve("clockshim.so");
    Process gcc;
    try {
      gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O2", "-o", so.toString(), source.toString())
          .redirectErrorStream(true).start();
    } catch (IOException e) {
      MissingRuntime.skipOrFail("the clock-step tests build an LD_PRELOAD shim with gcc, which is not installed ("
          + e.getMessage() + "): install gcc");
      throw e;
    }
    try {
      String output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (gcc.waitFor() != 0) {
        throw new IllegalStateException("gcc could not build the clock shim: " + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted building the clock shim", e);
    }
    library = so;
    return so;
  }
}
