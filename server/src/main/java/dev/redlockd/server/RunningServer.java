package dev.redlockd.server;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import picocli.CommandLine;

/**
 * A redlockd server process on this machine, read from Linux's {@code /proc}: its flags (its
 * command line after the jar or the main class) and its environment, so that a health check
 * run beside it (a container's HEALTHCHECK) reaches it however it was configured. What is read
 * is parsed and never printed: it may hold Redis passwords.
 */
final class RunningServer {
  private static final String MAIN_CLASS = "dev.redlockd.server.Main";

  final long pid;
  final List<String> args;
  final Map<String, String> env;

  private RunningServer(long pid, List<String> args, Map<String, String> env) {
    this.pid = pid;
    this.args = args;
    this.env = env;
  }

  /**
   * The server that process {@code pid} runs, or else the one server among its descendants (a
   * container's init, {@code docker run --init}, runs the server as its child). Throws
   * IllegalArgumentException with a one-line reason.
   */
  static RunningServer find(long pid) {
    if (pid < 1) {
      throw new IllegalArgumentException("--server-pid must be a process id, not " + pid);
    }
    Path proc = Path.of("/proc");
    if (!Files.isDirectory(proc.resolve("self"))) {
      throw new IllegalArgumentException("--server-pid reads the server's flags from /proc, which this system lacks: "
          + "give the check the server's flags instead");
    }
    Optional<List<String>> own = serverArgs(commandLine(proc, pid).orElseThrow(() ->
        new IllegalArgumentException("--server-pid " + pid + ": no such process")));
    if (own.isPresent()) {
      return new RunningServer(pid, own.get(), environment(proc, pid));
    }
    List<RunningServer> children = new ArrayList<>();
    try (Stream<ProcessHandle> descendants = ProcessHandle.of(pid).stream().flatMap(ProcessHandle::descendants)) {
      descendants.forEach(child -> commandLine(proc, child.pid()).flatMap(RunningServer::serverArgs)
          .ifPresent(args -> children.add(new RunningServer(child.pid(), args, null))));
    }
    if (children.size() != 1) {
      throw new IllegalArgumentException("--server-pid " + pid + ": " + (children.isEmpty()
          ? "neither it nor any process it started runs the redlockd server"
          : "it started " + children.size() + " redlockd servers (pids " + children.stream().map(c -> c.pid).toList()
              + "): give the pid of one"));
    }
    RunningServer child = children.get(0);
    return new RunningServer(child.pid, child.args, environment(proc, child.pid));
  }

  /** Its flags parsed as the server parsed them, with its environment's REDLOCKD_* variables. */
  ServerConfig config() {
    ServerConfig config = new ServerConfig();
    CommandLine cli = ServerConfig.commandLine(config);
    cli.setDefaultValueProvider(new EnvironmentDefaults(env, ServerConfig.class));
    try {
      cli.parseArgs(args.toArray(String[]::new));
    } catch (CommandLine.ParameterException e) {
      // Not the parser's message: it may quote a value, and values may be secrets.
      throw new IllegalArgumentException("--server-pid " + pid + ": its arguments are not the server's flags");
    }
    return config;
  }

  /** The arguments after {@code -jar redlockd*.jar} or the main class; empty if not a server (a healthcheck is not). */
  static Optional<List<String>> serverArgs(List<String> commandLine) {
    for (int i = 0; i < commandLine.size(); i++) {
      String arg = commandLine.get(i);
      int first;
      if (arg.equals("-jar") && i + 1 < commandLine.size()
          && Path.of(commandLine.get(i + 1)).getFileName().toString().startsWith("redlockd")) {
        first = i + 2;
      } else if (arg.equals(MAIN_CLASS)) {
        first = i + 1;
      } else {
        continue;
      }
      List<String> args = commandLine.subList(first, commandLine.size());
      return !args.isEmpty() && args.get(0).equals("healthcheck") ? Optional.empty() : Optional.of(List.copyOf(args));
    }
    return Optional.empty();
  }

  private static Optional<List<String>> commandLine(Path proc, long pid) {
    try {
      return Optional.of(split(Files.readAllBytes(proc.resolve(Long.toString(pid)).resolve("cmdline"))));
    } catch (IOException e) {
      return Optional.empty(); // gone, or not ours to read
    }
  }

  private static Map<String, String> environment(Path proc, long pid) {
    Path file = proc.resolve(Long.toString(pid)).resolve("environ");
    List<String> entries;
    try {
      entries = split(Files.readAllBytes(file));
    } catch (IOException e) {
      throw new IllegalArgumentException("--server-pid " + pid + ": cannot read its environment (" + file
          + ": " + e.getClass().getSimpleName() + "): run the check as the server's user, or give it the server's "
          + "flags instead");
    }
    Map<String, String> env = new HashMap<>();
    for (String entry : entries) {
      int eq = entry.indexOf('=');
      if (eq > 0) {
        env.put(entry.substring(0, eq), entry.substring(eq + 1));
      }
    }
    return env;
  }

  /** /proc's NUL-separated lists, in the platform's encoding (as the JVM decoded its own arguments). */
  private static List<String> split(byte[] bytes) {
    String text = new String(bytes, Charset.defaultCharset());
    if (text.endsWith("\0")) {
      text = text.substring(0, text.length() - 1);
    }
    return text.isEmpty() ? List.of() : Arrays.asList(text.split("\0", -1));
  }
}
