package dev.redlockd.election;

import dev.redlockd.engine.Leases;
import dev.redlockd.engine.LockDescription;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This server's view of one election, kept while anyone here observes it. Announcements from
 * the servers that run the candidates say each change as it happens, in (term, seq) order;
 * a read of the nodes every {@link #CHECK_INTERVAL} catches what no one announces (a leader
 * whose process died lets its lease run out) and what pub/sub lost, a proclaimed value
 * included. Reads that cannot reach a quorum {@link #UNCONFIRMED_READS} times in a row report
 * no leader, since none can be confirmed, until a read finds one again; one such read alone is
 * more often a busy node than a lost majority.
 *
 * <p>Observers are told on the delivery executor, by one task at a time per watch, never on
 * the thread that applied the change (pub/sub, a read's completion, the one that opened the
 * observation) nor under this watch's lock: announcements and reads only post the new state to
 * each observer's {@link LatestState}. Observers must not block; one that is told slower than
 * the election changes gets the latest state.
 */
final class LeaderWatch {
  private static final Logger log = LoggerFactory.getLogger(LeaderWatch.class);
  static final Duration CHECK_INTERVAL = Duration.ofSeconds(1);
  static final int UNCONFIRMED_READS = 2;

  private final ElectionSpace elections;
  private final String election;
  private final ScheduledExecutorService scheduler;
  private final Executor delivery;
  private final Map<Consumer<Optional<Leader>>, LatestState> observers = new IdentityHashMap<>();

  // All guarded by this.
  /** The last announcement applied: its term and seq (a vacancy's seq is Long.MAX_VALUE). */
  private long term;
  private long seq = -1;
  private Leader leader;
  /** The state has been read or announced at least once: observers may be told. */
  private boolean known;
  private Optional<Leader> told;
  /** Announcements applied so far; a read that began before the latest one is out of date. */
  private long applied;
  private boolean checking;
  /** Reads in a row that could not tell. */
  private int failedReads;
  private AutoCloseable feed;
  private ScheduledFuture<?> checks;
  /** Observers with a state to be told, in the order their states came. */
  private final ArrayDeque<LatestState> due = new ArrayDeque<>();
  /** A delivery task is queued or running: it takes what is due until nothing is. */
  private boolean delivering;

  LeaderWatch(ElectionSpace elections, String election, ScheduledExecutorService scheduler, Executor delivery) {
    this.elections = elections;
    this.election = election;
    this.scheduler = scheduler;
    this.delivery = delivery;
  }

  /** Subscribes, then reads at once and every CHECK_INTERVAL. */
  synchronized void start() {
    feed = elections.listenForChanges(election, new Leases.ChangeListener() {
      @Override
      public void changed(String payload) {
        Announcement.decode(payload).ifPresent(LeaderWatch.this::apply);
      }

      @Override
      public void subscribed() {
        check(); // what was announced before the subscription went unheard
      }
    });
    long every = CHECK_INTERVAL.toNanos();
    checks = scheduler.scheduleWithFixedDelay(this::check, 0, every, TimeUnit.NANOSECONDS);
  }

  /** The observer hears the current state at once (if known) and every change after it. */
  synchronized void add(Consumer<Optional<Leader>> observer) {
    LatestState deliveries = new LatestState(observer);
    observers.put(observer, deliveries);
    if (known) {
      post(deliveries, told);
    }
  }

  /** True when this was the last observer: the watch has stopped. */
  synchronized boolean remove(Consumer<Optional<Leader>> observer) {
    LatestState deliveries = observers.remove(observer);
    if (deliveries != null) {
      deliveries.close();
    }
    if (!observers.isEmpty()) {
      return false;
    }
    checks.cancel(false);
    try {
      feed.close();
    } catch (Exception e) {
      log.debug("closing the announcements of election '{}'", election, e);
    }
    return true;
  }

  synchronized void apply(Announcement a) {
    if (compare(a.term(), a.seq(), term, seq) <= 0) {
      return; // a copy from another node, or older than what is known
    }
    term = a.term();
    seq = a.seq();
    leader = a.leader();
    applied++;
    tell();
  }

  private void check() {
    long appliedAtStart;
    synchronized (this) {
      if (checking) {
        return;
      }
      checking = true;
      appliedAtStart = applied;
    }
    elections.describe(election).whenComplete((description, failure) -> {
      synchronized (this) {
        checking = false;
        if (applied == appliedAtStart) { // else an announcement is newer than this read
          read(description, failure);
        }
      }
    });
  }

  private void read(LockDescription description, Throwable failure) {
    if (failure != null) {
      Throwable cause = failure instanceof CompletionException && failure.getCause() != null
          ? failure.getCause() : failure;
      log.debug("election '{}': no leader can be confirmed: {}", election, cause.getMessage());
      if (++failedReads >= UNCONFIRMED_READS || !known) {
        leader = null; // unconfirmed: the position stays, so the same term may be confirmed again
        tell();
      }
      return;
    }
    failedReads = 0;
    if (!description.held()) {
      seq = Long.MAX_VALUE; // a quorum answered and none holds it: whatever term it was has ended
      leader = null;
      tell();
      return;
    }
    long readTerm = description.fencingToken();
    int order = Terms.compare(readTerm, term);
    if (order > 0) {
      term = readTerm;
      seq = -1; // its announcements (seq 0 and up) still count
      leader = new Leader(description.owner(), readTerm);
    } else if (order == 0 && seq != Long.MAX_VALUE) {
      // Confirmed again, or only ever read, or with a newer value: this read began after the
      // last announcement was applied (else it was dropped), so a value it finds that differs
      // was proclaimed later, and that proclaim's announcement was lost. The position stays:
      // later announcements of this term still count.
      leader = new Leader(description.owner(), readTerm);
    }
    tell();
  }

  /** Tells every observer the state (on the delivery executor), unless it is what they were last told. */
  private void tell() {
    Optional<Leader> now = Optional.ofNullable(leader);
    if (known && now.equals(told)) {
      return;
    }
    known = true;
    told = now;
    for (LatestState deliveries : observers.values()) {
      post(deliveries, now);
    }
  }

  private void post(LatestState deliveries, Optional<Leader> state) {
    if (deliveries.post(state)) {
      due.add(deliveries);
    }
    if (!delivering) {
      delivering = true;
      try {
        delivery.execute(this::deliver);
      } catch (RejectedExecutionException e) {
        delivering = false; // the server is stopping: nothing more is told
      }
    }
  }

  /** Tells each observer what is due, a batch at a time, outside the lock; one run per watch at a time. */
  private void deliver() {
    while (true) {
      List<LatestState> batch = new ArrayList<>();
      List<Optional<Leader>> states = new ArrayList<>();
      synchronized (this) {
        for (LatestState deliveries; (deliveries = due.poll()) != null; ) {
          Optional<Leader> state = deliveries.take();
          if (state != null) {
            batch.add(deliveries);
            states.add(state);
          }
        }
        if (batch.isEmpty()) {
          delivering = false;
          return;
        }
      }
      for (int i = 0; i < batch.size(); i++) {
        batch.get(i).tell(states.get(i));
      }
    }
  }

  private static int compare(long termA, long seqA, long termB, long seqB) {
    int byTerm = Terms.compare(termA, termB);
    return byTerm != 0 ? byTerm : Long.compare(seqA, seqB);
  }
}
