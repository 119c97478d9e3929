package dev.redlockd.it.chaos;

import dev.redlockd.testing.ServerProcess;
import io.grpc.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The server replicas of a run, each a real server process (what users run) on the same Redis
 * nodes, killable with SIGKILL and restartable. {@link #close()} stops every process; a JVM
 * shutdown hook does too if the test run itself is aborted.
 */
final class Replicas implements AutoCloseable {
  /**
   * Three JVMs share 2 cores here: a small heap with the serial collector keeps the servers'
   * GC threads out of the way, and C1 only spares the CPU that C2 compilation takes at first.
   */
  static final List<String> JVM_ARGS = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  private final List<String> flags;
  private final ServerProcess[] processes; // guarded by this
  private final SwitchableChannel[] channels;
  private final List<String> retiredLogs = new ArrayList<>(); // guarded by this
  private final Thread cleanup = new Thread(this::killAll, "chaos-replicas-cleanup");

  private Replicas(List<String> flags, int count) {
    this.flags = List.copyOf(flags);
    this.processes = new ServerProcess[count];
    this.channels = new SwitchableChannel[count];
  }

  static Replicas start(int count, List<String> flags) {
    Replicas replicas = new Replicas(flags, count);
    Runtime.getRuntime().addShutdownHook(replicas.cleanup);
    try {
      for (int i = 0; i < count; i++) {
        replicas.processes[i] = replicas.launch();
        replicas.channels[i] = new SwitchableChannel(replicas.processes[i].channel());
      }
    } catch (RuntimeException e) {
      replicas.close();
      throw e;
    }
    return replicas;
  }

  private ServerProcess launch() {
    return ServerProcess.start(JVM_ARGS, flags, Map.of());
  }

  int size() {
    return processes.length;
  }

  /** The channel to replica {@code i}, whichever process plays it now. */
  Channel channel(int i) {
    return channels[i];
  }

  /**
   * SIGTERM, and waits for the process to exit: the graceful shutdown, which ends its streams
   * UNAVAILABLE and releases nothing.
   */
  void stop(int i) throws InterruptedException {
    ServerProcess p;
    synchronized (this) {
      p = processes[i];
    }
    p.sigterm();
    if (p.waitFor(java.time.Duration.ofSeconds(20)).isEmpty()) {
      throw new IllegalStateException("replica " + i + " did not stop within 20 s of SIGTERM");
    }
  }

  /** SIGKILL: the process dies with its KeepAlive streams and waiting calls open. */
  synchronized void kill(int i) {
    processes[i].kill();
  }

  /** Starts a new process for replica {@code i} (on a new port) and points its channel there. */
  void restart(int i) throws InterruptedException {
    ServerProcess old;
    synchronized (this) {
      old = processes[i];
    }
    ServerProcess next = launch();
    channels[i].switchTo(next.channel());
    synchronized (this) {
      processes[i] = next;
      retiredLogs.add(old.log());
    }
    old.close();
  }

  /** The tail of every server log of the run, for a failure report. */
  synchronized String logTails(int lines) {
    StringBuilder out = new StringBuilder();
    List<String> all = new ArrayList<>(retiredLogs);
    for (ServerProcess p : processes) {
      if (p != null) {
        all.add(p.log());
      }
    }
    for (String log : all) {
      String[] split = log.split("\n");
      out.append("----- server log (last ").append(lines).append(" lines)\n");
      for (int k = Math.max(0, split.length - lines); k < split.length; k++) {
        out.append(split[k]).append('\n');
      }
    }
    return out.toString();
  }

  private synchronized void killAll() {
    for (ServerProcess p : processes) {
      if (p != null) {
        p.kill();
      }
    }
  }

  @Override
  public synchronized void close() {
    for (ServerProcess p : processes) {
      if (p == null) {
        continue;
      }
      try {
        p.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.kill();
      }
    }
    try {
      Runtime.getRuntime().removeShutdownHook(cleanup);
    } catch (IllegalStateException shuttingDown) {
      // the hook is running or about to: nothing left to undo
    }
  }
}
