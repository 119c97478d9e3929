package dev.redlockd.it.polyglot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** An example client run as its own process, its output (stdout and stderr) in a file. */
final class ExampleProcess implements AutoCloseable {
  private final Process process;
  private final Path output;
  private final List<String> command;

  private ExampleProcess(Process process, Path output, List<String> command) {
    this.process = process;
    this.output = output;
    this.command = command;
  }

  static ExampleProcess start(List<String> command, Path workingDirectory) {
    try {
      Path output = Files.createTempFile("redlockd-example", ".log");
      Process process = new ProcessBuilder(command)
          .directory(workingDirectory.toFile())
          .redirectErrorStream(true)
          .redirectOutput(output.toFile())
          .start();
      return new ExampleProcess(process, output, command);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  String output() {
    try {
      return Files.readString(output);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits until a line of the output starts with {@code prefix}; fails if the process ends first. */
  void awaitLineStartingWith(String prefix, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (output().lines().anyMatch(line -> line.startsWith(prefix))) {
        return;
      }
      if (!process.isAlive()) {
        throw new AssertionError("example exited (" + process.exitValue() + ") before printing '" + prefix
            + "': " + command + "\n" + output());
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no line starting with '" + prefix + "' after " + timeout + ":\n" + output());
  }

  /** The exit code; fails (and kills it) if it is still running after the timeout. */
  int waitFor(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("example still running after " + timeout + ": " + command + "\n" + output());
    }
    return process.exitValue();
  }

  @Override
  public void close() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(5, TimeUnit.SECONDS);
  }
}
