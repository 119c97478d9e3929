package dev.redlockd.server.access;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reloads the access rules when their files change (their bytes are compared every period: an
 * mtime can miss a change made twice in the same second, and the files are small) and on SIGHUP.
 */
public final class PolicyWatch implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PolicyWatch.class);
  /** A signal has one handler per JVM; tests run several servers in one, each with its own rules. */
  private static final List<AccessControl> ON_HANGUP = new CopyOnWriteArrayList<>();
  private static boolean hangupHandled; // guarded by PolicyWatch.class

  private final AccessControl access;
  private final ScheduledExecutorService poller;

  private PolicyWatch(AccessControl access, ScheduledExecutorService poller) {
    this.access = access;
    this.poller = poller;
  }

  public static PolicyWatch start(AccessControl access, Duration every) {
    ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "redlockd-policy-watch");
      t.setDaemon(true);
      return t;
    });
    poller.scheduleWithFixedDelay(() -> {
      try {
        access.reload(true);
      } catch (RuntimeException e) {
        log.error("access policy watch: {}", e.toString());
      }
    }, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    ON_HANGUP.add(access);
    handleHangup();
    return new PolicyWatch(access, poller);
  }

  @SuppressWarnings("restriction")
  private static synchronized void handleHangup() {
    if (hangupHandled) {
      return;
    }
    try {
      // Without a handler, SIGHUP would stop the JVM (through the shutdown hooks).
      sun.misc.Signal.handle(new sun.misc.Signal("HUP"), signal -> {
        log.info("SIGHUP: reloading the access policy");
        ON_HANGUP.forEach(a -> a.reload(false));
      });
      hangupHandled = true;
    } catch (IllegalArgumentException e) {
      log.warn("SIGHUP cannot be handled in this JVM ({}); the policy is still reloaded when its files change",
          e.getMessage());
    }
  }

  @Override
  public void close() {
    ON_HANGUP.remove(access);
    poller.shutdownNow();
  }
}
