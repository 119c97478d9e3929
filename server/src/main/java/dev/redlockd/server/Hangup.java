package dev.redlockd.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP never stops the server: the JVM's default would run the shutdown hooks and exit 129,
 * and operators send HUP to "reload" by habit. With --policy, PolicyWatch takes the signal over
 * once the policy is loaded and reloads it.
 *
 * <p>A process started with SIGHUP ignored (under {@code nohup}, or by a parent that ignored
 * it) keeps it ignored: the JVM then installs no handler and says nothing, so a reload by
 * SIGHUP would silently never happen. That is said once, at start-up.
 */
final class Hangup {
  private static final Logger log = LoggerFactory.getLogger(Hangup.class);

  private Hangup() {}

  static void keepRunning(boolean policy) {
    String said = policy
        ? "SIGHUP before start-up finished: ignored (the policy was loaded moments ago)"
        : "SIGHUP: nothing to reload (no --policy); still running";
    try {
      sun.misc.SignalHandler previous = sun.misc.Signal.handle(new sun.misc.Signal("HUP"), signal -> log.info(said));
      if (previous == sun.misc.SignalHandler.SIG_IGN) {
        log.warn("SIGHUP is ignored in this process (started under nohup?){}", policy
            ? ": the policy is reloaded only when its files change"
            : "; there is no --policy to reload");
      }
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      log.warn("SIGHUP cannot be handled in this JVM ({}): it would stop the server", e.toString());
    }
  }
}
