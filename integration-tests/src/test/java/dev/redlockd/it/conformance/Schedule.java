package dev.redlockd.it.conformance;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A scenario's faults, applied once for every language's runner at once. Each lane (one
 * runner, in its own thread) goes through the same steps in the same order; a step waits until
 * every lane still in the scenario has reached it, runs its action once (in the thread of the
 * lane that came last), and then lets them all go on. A lane that fails leaves the schedule,
 * so that the others never wait for it.
 */
final class Schedule {
  /** A backstop only: each lane's own waits (an await point, a result) end far sooner. */
  private static final long STEP_TIMEOUT_SECONDS = 180;

  /** A step's action: a fault (SIGSTOP of nodes, a replica restart) or the end of one. */
  interface Action {
    void run() throws Exception;
  }

  private record Step(String name, Action action) {}

  private final Phaser phaser;
  private Step current; // guarded by this
  /** The action of each phase that threw, by phase. */
  private final Map<Integer, Throwable> failed = new ConcurrentHashMap<>();
  /**
   * Whether the calling lane arrived at a step that never ended for it (its wait timed out or
   * was interrupted): it must not arrive a second time in that phase when it leaves.
   */
  private final ThreadLocal<Boolean> stranded = ThreadLocal.withInitial(() -> false);

  Schedule(int lanes) {
    phaser = new Phaser(lanes) {
      @Override
      protected boolean onAdvance(int phase, int registeredParties) {
        Step step = take();
        if (step != null) {
          try {
            step.action().run();
          } catch (Throwable t) {
            failed.put(phase, t);
          }
        }
        return registeredParties == 0;
      }
    };
  }

  private synchronized Step take() {
    Step step = current;
    current = null;
    return step;
  }

  /**
   * Waits until every lane still in the scenario reached the step named {@code name}; the last
   * one to come runs {@code action}. Fails when the action failed.
   */
  void step(String name, Action action) throws InterruptedException, TimeoutException {
    synchronized (this) {
      if (current == null) {
        current = new Step(name, action);
      } else if (!current.name().equals(name)) {
        throw new IllegalStateException("lanes out of step: '" + name + "' while others are at '"
            + current.name() + "'");
      }
    }
    int phase = phaser.arrive();
    stranded.set(true);
    phaser.awaitAdvanceInterruptibly(phase, STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    stranded.set(false);
    Throwable cause = failed.get(phase);
    if (cause != null) {
      throw new AssertionError("the scenario's step '" + name + "' failed: " + cause, cause);
    }
  }

  /** How many lanes are still in the scenario: in a step's action, those that reached it. */
  int lanes() {
    return phaser.getRegisteredParties();
  }

  /** The calling lane's part is over (done or failed): the others no longer wait for it. */
  void leave() {
    if (!stranded.get()) {
      phaser.arriveAndDeregister();
    }
    stranded.remove();
  }
}
