package dev.redlockd.testing;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The runnable server jar as a separate process (what users run), with its output in a file.
 * {@link #close()} sends SIGTERM, then SIGKILL if it does not exit.
 */
public final class ServerProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("redlockd listening on port (\\d+)");
  /**
   * The JVM flags of a server started without any of its own: a test's server lives seconds, in
   * which C2's compilations would only take CPU from the processes beside it (a server start
   * costs about a third less CPU with C1 alone); a small heap and the serial collector keep
   * garbage-collector threads off the machine's few cores. Such a server also maps the jar's
   * {@link ClassDataArchive}.
   */
  public static final List<String> LIGHT_JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  private final Process process;
  private final Path log;
  private final int port;
  private boolean frozen; // guarded by this
  private ManagedChannel channel;

  private ServerProcess(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /**
   * What a server process is started under: {@code env --default-signal=HUP,INT} (coreutils 9),
   * so that it gets SIGHUP's and SIGINT's default dispositions, as a server started by an operator
   * or a service manager does, whatever the test run itself was started under. Under {@code nohup}
   * every child would inherit SIGHUP ignored, and a run started in the background by a
   * non-interactive shell ({@code cmd &}) inherits SIGINT ignored (an ignored signal stays ignored
   * across exec); a JVM that starts so cannot take the signal over: its SIGHUP reload, or its
   * shutdown on Ctrl-C, would never run. Nothing where {@code env} lacks the option (the servers
   * then inherit the run's dispositions).
   */
  private static final List<String> HANGUP_DEFAULT = hangupDefault();

  private static List<String> hangupDefault() {
    try {
      Process probe = new ProcessBuilder("env", "--default-signal=HUP,INT", "true").redirectErrorStream(true).start();
      probe.getInputStream().readAllBytes();
      return probe.waitFor(10, TimeUnit.SECONDS) && probe.exitValue() == 0
          ? List.of("env", "--default-signal=HUP,INT") : List.of();
    } catch (IOException e) {
      return List.of();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    }
  }

  /** The jar the build made: the {@code redlockd.server.jar} property, else the usual path. */
  public static Path jar() {
    String configured = System.getProperty("redlockd.server.jar");
    Path jar = configured != null ? Path.of(configured) : Path.of("server/target/redlockd-server.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no server jar at " + jar.toAbsolutePath() + ": run mvn package first");
    }
    // One spelling of the path in every module's tests: the class-data archive is bound to it.
    return jar.toAbsolutePath().normalize();
  }

  /**
   * Starts {@code java [jvmArgs] -jar <jar> --port 0 [flags]} and waits until it listens; flags
   * that name a {@code --port} of their own replace the {@code --port 0}, and no jvmArgs means
   * {@link #LIGHT_JVM}.
   */
  public static ServerProcess start(List<String> jvmArgs, List<String> flags, Map<String, String> env) {
    ServerProcess server = started(command(jvmArgs, flags), env);
    if (WarmUp.wanted(flags)) {
      WarmUp.run(server.channel());
    }
    return server;
  }

  public static ServerProcess start(String... flags) {
    return start(List.of(), List.of(flags), Map.of());
  }

  /** As {@link #start(List, List, Map)} with no environment of its own, and no warm-up. */
  static ServerProcess startPlain(List<String> jvmArgs, List<String> flags) {
    return started(command(jvmArgs, flags), Map.of());
  }

  /**
   * As {@link #start(String...)}, but with SIGHUP ignored in the server's process, as a server
   * started under {@code nohup} has it (whatever this test run was started under).
   */
  public static ServerProcess startWithHangupIgnored(String... flags) {
    List<String> command = new ArrayList<>(List.of("bash", "-c", "trap '' HUP; exec \"$@\"", "bash"));
    command.addAll(javaCommand(List.of(), List.of(flags)));
    return started(command, Map.of());
  }

  /** Starts {@code command} and waits until the server listens. */
  private static ServerProcess started(List<String> command, Map<String, String> env) {
    try {
      Path log = Files.createTempFile("redlockd-server", ".log");
      ProcessBuilder builder = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(log.toFile());
      builder.environment().putAll(env);
      Process process = builder.start();
      // A bound for a server that will never listen, not a speed: one usually listens within
      // seconds, but a busy machine was seen taking over 30 s to start one.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      while (System.nanoTime() < deadline) {
        Matcher m = LISTENING.matcher(Files.readString(log));
        if (m.find()) {
          return new ServerProcess(process, log, Integer.parseInt(m.group(1)));
        }
        if (!process.isAlive()) {
          break;
        }
        Thread.sleep(25);
      }
      process.destroyForcibly();
      throw new IllegalStateException("server did not start:\n" + Files.readString(log));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * The command line for the jar, for tests that run it without waiting for it to listen: with
   * SIGHUP's default disposition ({@link #HANGUP_DEFAULT}), and for a server
   * {@link ServerFlags#forTest} (admission control off unless the flags set it).
   */
  public static List<String> command(List<String> jvmArgs, List<String> flags) {
    List<String> command = new ArrayList<>(HANGUP_DEFAULT);
    command.addAll(javaCommand(jvmArgs, flags));
    return command;
  }

  private static List<String> javaCommand(List<String> jvmArgs, List<String> flags) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // The server's own temp files (dev mode's Redis, the extracted binary) go where the test's do.
    command.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    if (jvmArgs.isEmpty()) {
      command.addAll(LIGHT_JVM);
      command.addAll(ClassDataArchive.flags(jar()));
    } else {
      command.addAll(jvmArgs);
    }
    command.addAll(List.of("-jar", jar().toString()));
    if (!flags.contains("--port")) {
      command.addAll(List.of("--port", "0"));
    }
    command.addAll(ServerFlags.forTest(flags));
    return command;
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  public synchronized ManagedChannel channel() {
    if (channel == null) {
      channel = Grpc.newChannelBuilder("127.0.0.1:" + port, InsecureChannelCredentials.create()).build();
    }
    return channel;
  }

  /**
   * A new channel to the server with these credentials (TLS, mutual TLS) to 127.0.0.1, whose
   * certificate must then name that address; the caller shuts it down.
   */
  public ManagedChannel newChannel(ChannelCredentials credentials) {
    return Grpc.newChannelBuilder("127.0.0.1:" + port, credentials).build();
  }

  public String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** SIGTERM: the graceful shutdown. */
  public void sigterm() {
    process.destroy();
  }

  /** SIGSTOP: the server holds its sockets and answers nothing, as a partitioned or paused process. */
  public synchronized void freeze() {
    signal("STOP");
    frozen = true;
  }

  /** SIGCONT after {@link #freeze}. */
  public synchronized void thaw() {
    if (frozen) {
      signal("CONT");
      frozen = false;
    }
  }

  private void signal(String name) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGKILL: the process dies with its leases and streams open. */
  public void kill() {
    process.destroyForcibly();
  }

  /** The exit code, or empty when it is still running after the timeout. */
  public java.util.OptionalInt waitFor(Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
        ? java.util.OptionalInt.of(process.exitValue())
        : java.util.OptionalInt.empty();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  @Override
  public synchronized void close() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (frozen && process.isAlive()) {
      thaw(); // a stopped process would not act on the SIGTERM
    }
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(5, TimeUnit.SECONDS);
    }
  }
}
