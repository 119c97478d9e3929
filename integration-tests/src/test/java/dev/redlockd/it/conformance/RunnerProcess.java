package dev.redlockd.it.conformance;

import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A language's conformance runner (or example) as a process: its JSON events as they come,
 * every line it wrote (stdout and stderr together, for the token check), and its standard
 * input for answering its {@code await} points.
 */
final class RunnerProcess implements AutoCloseable {
  private final Process process;
  private final String name;
  private final List<String> command;
  private final StringBuffer transcript = new StringBuffer();
  private final BlockingQueue<JsonObject> events = new LinkedBlockingQueue<>();
  /** The belief and belief-end events, dated as they were read: the belief oracle's input. */
  private final List<BeliefOracle.Belief> beliefs = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Thread reader;
  private volatile Runnable onAwait = () -> {};

  private RunnerProcess(Process process, String name, List<String> command) {
    this.process = process;
    this.name = name;
    this.command = command;
    this.reader = new Thread(this::readLines, "runner-output");
    reader.setDaemon(true);
    reader.start();
  }

  static RunnerProcess start(List<String> command, Path directory) {
    return start(command.get(0), command, directory);
  }

  /** {@code name}: what the test report calls it (a language and a scenario, say). */
  static RunnerProcess start(String name, List<String> command, Path directory) {
    try {
      Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
      return new RunnerProcess(process, name, command);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + command, e);
    }
  }

  private void readLines() {
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = lines.readLine()) != null; ) {
        transcript.append(line).append('\n');
        if (line.startsWith("{")) {
          long readAt = System.nanoTime();
          try {
            JsonObject event = JsonParser.parseString(line).getAsJsonObject();
            BeliefOracle.Belief belief = BeliefOracle.Belief.of(event, readAt);
            if (belief != null) {
              beliefs.add(belief);
            } else {
              events.add(event);
            }
          } catch (JsonParseException | IllegalStateException | UnsupportedOperationException notAnEvent) {
            // a log line that happens to start with a brace
          }
        }
      }
    } catch (IOException ended) {
      // the process is gone
    }
  }

  /** The next event; fails with the transcript when none comes in time or the process ends first. */
  JsonObject next(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      JsonObject event = events.poll(20, TimeUnit.MILLISECONDS);
      if (event != null) {
        return event;
      }
      if (!process.isAlive() && !reader.isAlive() && events.isEmpty()) {
        throw new AssertionError("runner exited (" + process.exitValue() + ") before its next event: "
            + command + "\n" + transcript);
      }
    }
    throw new AssertionError("no event from the runner within " + timeout + ": " + command + "\n" + transcript);
  }

  /** Waits for the runner to reach {@code point}; the caller acts, then {@link #answer()}s. */
  void expectAwait(String point, Duration timeout) throws InterruptedException {
    JsonObject event = next(timeout);
    if (!"await".equals(string(event, "event")) || !point.equals(string(event, "name"))) {
      throw new AssertionError("expected await '" + point + "', got " + event + "\n" + transcript);
    }
    onAwait.run();
  }

  /** Runs each time the runner reaches an await point, before the caller acts (a reading of the nodes, say). */
  void onAwait(Runnable action) {
    onAwait = action;
  }

  /** Lets the runner go on past its current await point. */
  void answer() {
    try {
      OutputStream in = process.getOutputStream();
      in.write('\n');
      in.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("the runner's standard input is closed:\n" + transcript, e);
    }
  }

  /** The result event, after the process exited 0. */
  JsonObject result(Duration timeout) throws InterruptedException {
    return result(timeout, null, event -> {});
  }

  /**
   * The result event, after the process exited 0; the events named {@code reported} that come
   * before it (each within {@code timeout} of the last) go to {@code each} as they arrive.
   */
  JsonObject result(Duration timeout, String reported, java.util.function.Consumer<JsonObject> each)
      throws InterruptedException {
    JsonObject event = next(timeout);
    while (reported != null && reported.equals(string(event, "event"))) {
      each.accept(event);
      event = next(timeout);
    }
    if (!"result".equals(string(event, "event"))) {
      throw new AssertionError("expected the result, got " + event + "\n" + transcript);
    }
    int exit = waitFor(Duration.ofSeconds(20));
    if (exit != 0) {
      throw new AssertionError("runner exited " + exit + " after its result: " + command + "\n" + transcript);
    }
    System.out.println(name + " runner result: " + event); // for the test report
    return event;
  }

  /** The exit code; fails (and kills it) when it is still running after the timeout. */
  int waitFor(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("still running after " + timeout + ": " + command + "\n" + transcript);
    }
    reader.join(5_000);
    return process.exitValue();
  }

  /** The beliefs read so far, in the order they came. */
  List<BeliefOracle.Belief> beliefs() {
    return List.copyOf(beliefs);
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** Everything the process wrote so far. */
  String transcript() {
    return transcript.toString();
  }

  private static String string(JsonObject event, String name) {
    return event.has(name) && event.get(name).isJsonPrimitive() ? event.get(name).getAsString() : null;
  }

  @Override
  public void close() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(5, TimeUnit.SECONDS);
  }
}
