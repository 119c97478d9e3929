package dev.redlockd.engine;

import dev.redlockd.node.Pipelining;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;

/**
 * Gathers the kept-lease renewals that fall due together and sends them as one many-lease
 * extend per node. A lease that falls due adds itself; the first of a batch schedules the
 * send right behind the timers already due, which on the engine's one scheduler thread means
 * after every renewal due at the same grid time.
 */
final class RenewalBatch {
  private final Leases space;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier nanoClock;
  private final Backlog backlog;
  private List<KeptLease> due = new ArrayList<>(); // guarded by this

  RenewalBatch(Leases space, ScheduledExecutorService scheduler, LongSupplier nanoClock, Backlog backlog) {
    this.space = space;
    this.backlog = backlog;
    this.scheduler = scheduler;
    this.nanoClock = nanoClock;
  }

  void add(KeptLease lease) {
    boolean first;
    synchronized (this) {
      first = due.isEmpty();
      due.add(lease);
    }
    if (first) {
      scheduler.execute(this::send);
    }
  }

  private void send() {
    List<KeptLease> batch;
    synchronized (this) {
      batch = due;
      due = new ArrayList<>();
    }
    batch.removeIf(KeptLease::ended); // stopped or released while it waited for the batch
    List<KeptLease.Start> starts = batch.stream().map(KeptLease::start).toList();
    List<Redlock.Extension> extensions = starts.stream().map(KeptLease.Start::extension).toList();
    long sent = nanoClock.getAsLong();
    if (!starts.isEmpty()) {
      // The oldest renewal of the batch: how long it waited for the scheduler thread after it fell due.
      long late = 0;
      for (KeptLease.Start start : starts) {
        late = Math.max(late, sent - start.dueNanos());
      }
      backlog.record(late);
    }
    List<CompletableFuture<Grant>> renewed = new ArrayList<>();
    Pipelining.together(() -> renewed.addAll(space.extendAll(extensions)));
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).whenRenewed(renewed.get(i), sent, starts.get(i));
    }
  }
}
