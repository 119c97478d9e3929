package dev.redlockd.client;

import io.grpc.Status;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@link LockClient#lead}: campaign, run the work on the caller's thread while leading, resign.
 * The work's thread is interrupted the moment the leadership is lost (the loss callback, which
 * fires a guard before the deadline); the caller cancels the whole run by interrupting it.
 */
final class LeaderRun<T> {
  private final LockClient client;
  private final String election;
  private final CampaignOptions options;
  private final OnLoss onLoss;
  private final LeaderWork<T> work;

  LeaderRun(LockClient client, String election, CampaignOptions options, OnLoss onLoss, LeaderWork<T> work) {
    this.client = client;
    this.election = election;
    this.options = options;
    this.onLoss = onLoss;
    this.work = work;
  }

  T run() throws Exception {
    for (;;) {
      Leadership leadership = campaign();
      Round<T> round = new Round<>(leadership);
      try {
        return round.runWork(work);
      } catch (LeaseLostException e) {
        if (e != round.loss() || onLoss != OnLoss.REQUEUE) {
          throw e;
        }
        // Lost while the work ran, and the work has returned: lead again.
      } finally {
        resign(leadership);
      }
    }
  }

  /**
   * Resigns when still leading (nothing when lost or resigned by the work), and waits for the
   * answer even when the caller's interrupt is pending: cut short, the resign would cancel its
   * stream, and the next candidate would wait out the ttl. The interrupt is kept for the caller.
   */
  private static void resign(Leadership leadership) {
    boolean interrupted = Thread.interrupted();
    try {
      leadership.close();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private Leadership campaign() throws InterruptedException {
    try {
      return client.campaign(election, options);
    } catch (LockServiceException e) {
      if (e.status().getCode() == Status.Code.CANCELLED && Thread.interrupted()) {
        InterruptedException cancelled = new InterruptedException("lead of election '" + election
            + "' interrupted while campaigning");
        cancelled.initCause(e);
        throw cancelled;
      }
      throw e;
    }
  }

  /** One leadership and the work run under it. */
  private static final class Round<T> {
    private final Leadership leadership;
    private final Thread worker = Thread.currentThread();
    // Guards `working`, so that an interrupt for a lost leadership can never reach this thread
    // after the work is over (it would hit whatever the caller does next).
    private final Object guard = new Object();
    private boolean working = true; // guarded by guard
    private final AtomicReference<LeaseLostException> lost = new AtomicReference<>();

    Round(Leadership leadership) {
      this.leadership = leadership;
    }

    LeaseLostException loss() {
      return lost.get();
    }

    /**
     * The work's result, or its exception; when the leadership was lost while it ran, the
     * loss (with anything the work threw suppressed in it), once the work has returned.
     */
    T runWork(LeaderWork<T> work) throws Exception {
      leadership.onLost(e -> {
        synchronized (guard) {
          if (working && lost.compareAndSet(null, e)) {
            worker.interrupt();
          }
        }
      });
      T result;
      try {
        result = work.run(leadership);
      } catch (Exception | Error e) {
        stopWorking();
        throwIfLost(e);
        throw e;
      }
      stopWorking();
      throwIfLost(null);
      return result;
    }

    private void stopWorking() {
      synchronized (guard) {
        working = false;
      }
    }

    private void throwIfLost(Throwable fromWork) {
      LeaseLostException e = lost.get();
      if (e != null) {
        Thread.interrupted(); // the interrupt was ours, not the caller's
        if (fromWork != null && fromWork != e) {
          e.addSuppressed(fromWork);
        }
        throw e;
      }
    }
  }
}
