package dev.redlockd.it.conformance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** Finds the repository, and runs a command to its end with its output collected. */
final class Runtimes {
  /**
   * The commands running now. A test JVM that exits while one runs (a run that needed a client
   * build only for a test that already failed) stops it and whatever it started: nothing a
   * test started outlives the test run.
   */
  private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(p -> {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }), "runtimes-cleanup"));
  }

  private Runtimes() {}

  /** The repository root: the nearest directory up from here with clients/ and the proto. */
  static Path repositoryRoot() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isDirectory(dir.resolve("clients")) && Files.isDirectory(dir.resolve("proto/src/main/proto"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no repository root with clients/ above " + Path.of("").toAbsolutePath());
  }

  /** How a command ended: its exit code (-1 when it could not start or ran past its timeout). */
  record Result(int exitCode, String output) {
    boolean ok() {
      return exitCode == 0;
    }
  }

  /**
   * Runs a command, with these environment variables set for it, to its end; ok when it exits 0
   * within the timeout. A missing program is not ok.
   */
  static Result run(List<String> command, Path directory, Duration timeout, Map<String, String> env)
      throws InterruptedException {
    Process process;
    try {
      ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true);
      builder.environment().putAll(env);
      process = builder.start();
    } catch (IOException e) {
      return new Result(-1, e.getMessage());
    }
    RUNNING.add(process);
    try {
      return awaitEnd(process, command, timeout);
    } finally {
      RUNNING.remove(process);
    }
  }

  private static Result awaitEnd(Process process, List<String> command, Duration timeout) throws InterruptedException {
    // Read while it runs: a chatty program (npm) would otherwise block on a full pipe.
    StringBuilder output = new StringBuilder();
    Thread reader = new Thread(() -> {
      try {
        output.append(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException ignored) {
        // the process was killed
      }
    }, "command-output");
    reader.start();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      reader.join(5000);
      return new Result(-1, output + "\nstill running after " + timeout + ": " + command);
    }
    reader.join(5000);
    return new Result(process.exitValue(), output.toString().strip());
  }
}
