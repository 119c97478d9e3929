package dev.redlockd.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real server as a separate process, so its CPU and memory can be read apart from the
 * load generator's: CPU from /proc, heap from jcmd.
 */
final class ServerUnderTest implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("redlockd listening on port (\\d+)");
  private static final long CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

  private final Process process;
  private final Path log;
  private final int port;

  private ServerUnderTest(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  static ServerUnderTest start(Path jar, List<String> jvmArgs, List<String> flags) throws IOException, InterruptedException {
    Path log = Files.createTempFile("redlockd-bench-server", ".log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmArgs);
    command.addAll(List.of("-jar", jar.toString(), "--port", "0"));
    command.addAll(flags);
    Process process = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
    // A bench stopped by a signal must not leave its server running (close() never runs then).
    Runtime.getRuntime().addShutdownHook(new Thread(process::destroy, "stop-server-" + process.pid()));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      Matcher m = LISTENING.matcher(Files.readString(log));
      if (m.find()) {
        return new ServerUnderTest(process, log, Integer.parseInt(m.group(1)));
      }
      if (!process.isAlive()) {
        break;
      }
      Thread.sleep(50);
    }
    process.destroyForcibly();
    throw new IllegalStateException("server did not start:\n" + Files.readString(log));
  }

  int port() {
    return port;
  }

  long pid() {
    return process.pid();
  }

  /** CPU time used so far (user + system), from /proc/PID/stat. */
  Duration cpuTime() throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime
    return Duration.ofMillis(ticks * 1000 / CLOCK_TICKS_PER_SECOND);
  }

  /** Resident memory in MiB, from /proc/PID/status. */
  long rssMiB() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
      }
    }
    return -1;
  }

  /** Heap in use after a full GC, in MiB (jcmd GC.run then GC.heap_info). */
  long heapUsedAfterGcMiB() throws IOException, InterruptedException {
    jcmd("GC.run");
    String info = jcmd("GC.heap_info");
    Matcher m = Pattern.compile("used (\\d+)K").matcher(info);
    return m.find() ? Long.parseLong(m.group(1)) / 1024 : -1;
  }

  private String jcmd(String command) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process p = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), command)
        .redirectErrorStream(true)
        .start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(30, TimeUnit.SECONDS);
    return out;
  }

  String log() throws IOException {
    return Files.readString(log);
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
    try {
      Files.deleteIfExists(log); // a run that got this far needs the server's log no more
    } catch (IOException e) {
      System.err.println("could not delete " + log + ": " + e.getMessage());
    }
  }
}
