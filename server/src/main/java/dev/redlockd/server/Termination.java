package dev.redlockd.server;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGTERM and SIGINT run the graceful shutdown once, on a thread of their own, and {@link #await}
 * returns when it has finished: main then exits 0, one documented code that systemd units and
 * orchestrators can rely on. Left to the JVM, the signal ran the shutdown from an exit hook and the
 * code was 143 (128 + SIGTERM), or 0 when main's own exit got in first: a race.
 */
final class Termination {
  private static final Logger log = LoggerFactory.getLogger(Termination.class);

  private final Runnable shutdown;
  private final AtomicBoolean started = new AtomicBoolean();
  private final CountDownLatch finished = new CountDownLatch(1);

  private Termination(Runnable shutdown) {
    this.shutdown = shutdown;
  }

  /**
   * Takes SIGTERM and SIGINT over for {@code shutdown} (idempotent). A JVM that does not let them
   * be handled (-Xrs) keeps its own handling, with {@code shutdown} as an exit hook.
   */
  static Termination on(Runnable shutdown) {
    Termination termination = new Termination(shutdown);
    try {
      sun.misc.Signal.handle(new sun.misc.Signal("TERM"), s -> termination.start());
      sun.misc.Signal.handle(new sun.misc.Signal("INT"), s -> termination.start());
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      termination.finished.countDown(); // nothing to wait for here: the hook runs as the JVM exits
      log.warn("SIGTERM and SIGINT cannot be handled in this JVM ({}): they stop the server through an exit hook, "
          + "and the exit code is the JVM's", e.toString());
      Runtime.getRuntime().addShutdownHook(new Thread(shutdown, "redlockd-shutdown"));
    }
    return termination;
  }

  /** The first signal starts the shutdown; later ones change nothing (it is bounded by --shutdown-grace). */
  private void start() {
    if (!started.compareAndSet(false, true)) {
      return;
    }
    Thread thread = new Thread(() -> {
      try {
        shutdown.run();
      } finally {
        finished.countDown();
      }
    }, "redlockd-shutdown");
    thread.start();
  }

  /** Returns once a signal's shutdown has finished (at once when the signals are the JVM's). */
  void await() throws InterruptedException {
    finished.await();
  }
}
