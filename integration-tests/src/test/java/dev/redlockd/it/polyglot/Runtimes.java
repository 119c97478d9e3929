package dev.redlockd.it.polyglot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Finds the repository and asks whether a language runtime is there, by running it. */
final class Runtimes {
  private Runtimes() {}

  /** The repository root: the nearest directory up from here with examples/ and the proto. */
  static Path repositoryRoot() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isDirectory(dir.resolve("examples")) && Files.isDirectory(dir.resolve("proto/src/main/proto"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no repository root with examples/ above " + Path.of("").toAbsolutePath());
  }

  record Result(boolean ok, String output) {}

  /** Runs a command; ok when it exits 0 within the timeout. A missing program is not ok. */
  static Result run(List<String> command, Path directory, Duration timeout) throws InterruptedException {
    Process process;
    try {
      process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
    } catch (IOException e) {
      return new Result(false, e.getMessage());
    }
    // Read while it runs: a chatty program (npm) would otherwise block on a full pipe.
    StringBuilder output = new StringBuilder();
    Thread reader = new Thread(() -> {
      try {
        output.append(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException ignored) {
        // the process was killed
      }
    }, "runtime-probe-output");
    reader.start();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      reader.join(5000);
      return new Result(false, "still running after " + timeout + ": " + command);
    }
    reader.join(5000);
    return new Result(process.exitValue() == 0, output.toString().strip());
  }
}
