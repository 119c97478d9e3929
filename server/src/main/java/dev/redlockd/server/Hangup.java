package dev.redlockd.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP never stops the server: the JVM's default would run the shutdown hooks and exit 129,
 * and operators send HUP to "reload" by habit. With --policy, PolicyWatch takes the signal over
 * once the policy is loaded and reloads it.
 */
final class Hangup {
  private static final Logger log = LoggerFactory.getLogger(Hangup.class);

  private Hangup() {}

  static void keepRunning(boolean policy) {
    String said = policy
        ? "SIGHUP before start-up finished: ignored (the policy was loaded moments ago)"
        : "SIGHUP: nothing to reload (no --policy); still running";
    try {
      sun.misc.Signal.handle(new sun.misc.Signal("HUP"), signal -> log.info(said));
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      log.warn("SIGHUP cannot be handled in this JVM ({}): it would stop the server", e.toString());
    }
  }
}
