package dev.redlockd.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The client end of what keeps a grant alive (KeepAlive, Campaign), over as many gRPC streams
 * as it takes: a request every ttl/4 with a rising sequence, answers dated by the send time of
 * the request they echo, a stream that breaks reopened, and the end of it all told apart from
 * one the holder asked for.
 *
 * <p>The server counts a renewal's validity from when it finished; its answer may then spend
 * any time on the way (a congested link, a long GC pause here). So the deadline is counted
 * from the send time of the request whose sequence the answer echoes: that renewal began after
 * the request arrived, so the deadline is never later than the server's. To keep that send
 * time recent, a request goes out every ttl/4; each renews at once, and the server's own
 * ttl/3 timer, restarted by each renewal, then never fires first, so the renewals are not
 * doubled.
 *
 * <p>A stream that ends with NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED or INVALID_ARGUMENT
 * (or OK, unasked) is the end: {@link #endedUnexpectedly}. Any other end (UNAVAILABLE from a
 * replica shutting down, a broken connection) is not: a new stream is opened on the same
 * channel, which may reach another replica, and sends the first request again, after a backoff
 * with jitter (50 ms doubling up to 1 s, each wait between half and all of it), for as long as
 * the holder finds it {@link #worthResuming() worth it} (a lease until its guarded deadline).
 * Sequences keep rising across streams, and the deadline does not move while no stream is up.
 *
 * <p>A stream that stops answering is broken too: a replica whose host froze, or a partition
 * that leaves its connection open, ends nothing. While the holder {@link #awaitsAnswers()
 * awaits answers}, a request left unanswered for a quarter of the ttl (the requests' own
 * period: a healthy replica answers within a Redis round) gets its stream <em>superseded</em>:
 * a new one is opened at once, with the same first request, which may reach another replica.
 * The silent one sends nothing more but is still read: a replica that was only slow (a cold
 * JVM, a long pause) may still answer, and that answer counts as any other, dated by the send
 * time of the request it echoes. It is cancelled (a RST_STREAM in grpc-java, never a
 * half-close, which would give the grant back) once the new stream has answered, or when the
 * holder is done. Silence is not a loss: only the guarded deadline, or a final status, is.
 *
 * <p>The channel's round_robin still counts the silent replica as ready (its connection was
 * never closed) and takes each new stream to the next replica in turn, so a replacement may
 * land on it again (a lease and a leadership reopening together, or a second replica silent
 * too). So a stream opened to replace a silent one is held to a third of the bound until its
 * first answer, and every reopen after a silence goes at once: each silence took a bound of
 * time already, which paces them.
 *
 * <p>A replica that is slow, not silent, must not be taken for a silent one: each stream
 * opened adds a renewal on its replica, and the superseded ones are renewed there until they
 * end, so with hundreds of grants a burst of late answers (a replica just restarted, a loaded
 * host) turned into thousands of new streams a second, which made every answer later still,
 * until none came before its deadline (issue 40: 500 kept leases at ttl 3 s on a loaded host,
 * 2,500 replacements in 4 s, every lease lost). So the bound grows with what the grant
 * measured: never less than twice its slowest recent answer ({@link SlowestAnswer}), up to twice
 * the period, while a silent replica, which answers nothing, leaves it where it was.
 */
abstract class RenewalStream<Req, Resp> {
  private static final long FIRST_REOPEN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long MAX_REOPEN_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** The part of the silence bound a stream replacing a silent one gets until its first answer. */
  static final int REPLACEMENT_DIVISOR = 3;
  /** The ends that say the grant is gone (or can never be renewed by this holder). */
  private static final Set<Status.Code> FINAL = EnumSet.of(Status.Code.NOT_FOUND, Status.Code.PERMISSION_DENIED,
      Status.Code.UNAUTHENTICATED, Status.Code.INVALID_ARGUMENT);

  private final LongSupplier nanoClock;
  private final ScheduledExecutorService scheduler;
  /** Runs before each reopening: asks the channel to reconnect now, not after its own backoff. */
  private final Runnable reconnect;
  /** How it ended for good: the holder's half-close or cancel, or a final status. */
  private final CompletableFuture<Status> ended = new CompletableFuture<>();
  private final SentRequests sent = new SentRequests();
  private final SlowestAnswer slowest = new SlowestAnswer();
  /**
   * The slowest recent answer of every kept grant of the client, which the silence bound follows
   * as it follows the grant's own. A stream that just moved (its replica shut down) has no answer
   * of its own yet, and its first one is late when hundreds of streams moved with it to replicas
   * busy starting: the other grants' answers say so. Only answers on a grant's open stream count
   * there: a late answer on a stream left for its silence is a replica that stopped and woke (a
   * frozen host), which says nothing of the others, and the other grants must still leave a
   * silent replica within the bound. A silent replica leaves it as it was (it answers nothing),
   * and the replicas still answering keep it short.
   */
  private final SlowestAnswer shared;
  private volatile boolean closing;
  private boolean over; // guarded by this
  private Call current; // guarded by this; null while no stream is up
  private long deadlineNanos = Long.MIN_VALUE; // guarded by this
  private long nextSequence = 1; // guarded by this
  /** Answers that echo a lower sequence are ignored (sent before the last change). */
  private long floorSequence; // guarded by this
  private int failures; // guarded by this; ends since the last answer
  private ScheduledFuture<?> nextRequest; // guarded by this
  private ScheduledFuture<?> reopening; // guarded by this
  /** A quarter of the ttl: the requests' period, and how long a request may go unanswered. */
  private long periodNanos; // guarded by this
  /** The sequence of the current stream's first request. */
  private long streamFirstSequence; // guarded by this
  /** The highest sequence an answer on the current stream echoed (every request up to it is answered). */
  private long echoedOnStream; // guarded by this
  private ScheduledFuture<?> silenceCheck; // guarded by this
  /** Streams found silent and replaced, still read, not cancelled yet. */
  private final List<Call> superseded = new ArrayList<>(); // guarded by this
  /** The next stream opened replaces a silent one. */
  private boolean replacingNext; // guarded by this
  /** The current stream replaces a silent one and has not answered yet: a third of the bound. */
  private boolean replacing; // guarded by this
  /** The server refused a reopen with "do not retry": no stream is left to give the grant back by. */
  private boolean refusedForGood; // guarded by this

  RenewalStream(LongSupplier nanoClock, ScheduledExecutorService scheduler, Runnable reconnect,
      SlowestAnswer shared) {
    this.nanoClock = nanoClock;
    this.shared = shared;
    this.scheduler = scheduler;
    this.reconnect = reconnect;
  }

  /** Starts one gRPC stream (KeepAlive, Campaign) with this observer. Called under this object's lock. */
  abstract void open(ClientResponseObserver<Req, Resp> observer);

  /**
   * The next request to send, carrying {@code sequence}; {@code first}: the first one of a
   * stream (which names the grant). Called under this object's lock.
   */
  abstract Req request(long sequence, boolean first);

  /**
   * An answer moved the deadline forward to {@code deadlineNanos}. Called under this object's
   * lock, so that a change made under it (a ttl made shorter) is never undone by an answer
   * dated before it; must not block.
   */
  void deadlineMoved(long deadlineNanos) {}

  /**
   * An answer (not one echoing a sequence sent before the last change); {@code deadlineNanos}
   * is the deadline it moved forward to, or {@link SentRequests#UNKNOWN}. Not under the lock.
   */
  abstract void answered(Resp response, long deadlineNanos);

  /**
   * Whether a stream that broke is to be reopened (the grant is still the holder's to keep).
   * Called under this object's lock; must not block.
   */
  abstract boolean worthResuming();

  /** The stream ended for good without the holder asking for it. Not under the lock. */
  abstract void endedUnexpectedly(Status status);

  /**
   * After a loss whose stream the server refused with "do not retry": gives the grant back
   * without a stream (a fire-and-forget call), if there is a way. Not under the lock.
   */
  void giveBackWithoutStream() {}

  /**
   * Whether answers are due (a lease, a leader), so that a stream that stops answering is
   * reopened; a candidate still waiting hears nothing until it leads. Called under this object's
   * lock; must not block.
   */
  boolean awaitsAnswers() {
    return true;
  }

  /** The stream ended with OK without the holder asking for it: how to report that. */
  abstract Status unexpectedOk();

  /** The validity an answer carries. */
  abstract Duration validityOf(Resp response);

  /** The sequence an answer echoes. */
  abstract long sequenceOf(Resp response);

  /** Opens the first stream, sends its first request at once and then one every ttl/4. */
  final synchronized void startRequests(Duration ttl) {
    periodNanos = period(ttl);
    openLocked();
    restartPeriodLocked(ttl);
  }

  /** Sends one more request now (a changed value, say), in sequence with the periodic ones. */
  final synchronized void sendNow() {
    if (!closing && current != null) {
      sendLocked(false);
    }
  }

  /**
   * A change of what the requests say (a new ttl): from now on answers echoing an earlier
   * sequence are ignored, and requests go out every {@code ttl}/4. Sends a request now if a
   * stream is up; if not, the reopened stream's first request carries the change. Returns the
   * sequence of the request that carries it. Call under this object's lock.
   */
  final long sendChangeLocked(Duration ttl) {
    long sequence = nextSequence;
    floorSequence = sequence;
    if (!closing && current != null) {
      sendLocked(false);
    }
    restartPeriodLocked(ttl);
    return sequence;
  }

  /** The deadline may be no later than this from now on (answers move it forward from there). Under the lock. */
  final void cutDeadlineLocked(long latestDeadlineNanos) {
    if (latestDeadlineNanos < deadlineNanos) {
      deadlineNanos = latestDeadlineNanos;
    }
  }

  private synchronized void sendNext() {
    if (!closing && current != null) {
      sendLocked(false);
    }
  }

  private void restartPeriodLocked(Duration ttl) {
    if (nextRequest != null) {
      nextRequest.cancel(false);
    }
    if (closing || over) {
      return;
    }
    periodNanos = period(ttl);
    nextRequest = scheduler.scheduleAtFixedRate(this::sendNext, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
  }

  private static long period(Duration ttl) {
    return Math.max(1, ttl.toNanos() / 4);
  }

  /** Opens a stream and sends its first request. */
  private void openLocked() {
    cancelSilenceCheckLocked(); // the last stream's
    Call call = new Call();
    current = call;
    streamFirstSequence = nextSequence;
    echoedOnStream = nextSequence - 1;
    replacing = replacingNext;
    replacingNext = false;
    open(call);
    sendLocked(true);
  }

  /** The stream's requests are sent one at a time, under this lock. */
  private void sendLocked(boolean first) {
    if (current == null) {
      return; // it ended while being opened: the reopened stream's first request carries this one
    }
    long sequence = nextSequence++;
    sent.record(sequence, nanoClock.getAsLong());
    armSilenceCheckLocked();
    try {
      current.requests.onNext(request(sequence, first));
    } catch (IllegalStateException streamAlreadyClosed) {
      // The stream ended under us: onError/onCompleted says how.
    }
  }

  /** The oldest request on the current stream that no answer has echoed yet, or 0. */
  private long oldestUnansweredLocked() {
    long oldest = Math.max(streamFirstSequence, echoedOnStream + 1);
    return oldest < nextSequence ? oldest : 0;
  }

  /** Arms the check that the oldest unanswered request of the current stream is answered in time. */
  private void armSilenceCheckLocked() {
    if (silenceCheck != null || current == null || closing || over || !awaitsAnswers()) {
      return;
    }
    long oldest = oldestUnansweredLocked();
    if (oldest == 0) {
      return;
    }
    long sentNanos = sent.sentAt(oldest);
    long now = nanoClock.getAsLong();
    long due = sentNanos == SentRequests.UNKNOWN ? now : sentNanos + silenceBoundLocked();
    Call call = current;
    silenceCheck = scheduler.schedule(() -> checkSilence(call), Math.max(0, due - now), TimeUnit.NANOSECONDS);
  }

  /**
   * How long the current stream's oldest request may wait for an answer: the period (a third of
   * it for a replacement), or twice the slowest recent answer of the grant or its client, up to
   * twice the period.
   */
  private long silenceBoundLocked() {
    long base = replacing ? periodNanos / REPLACEMENT_DIVISOR : periodNanos;
    long now = nanoClock.getAsLong();
    long slowestNanos = Math.max(slowest.nanos(now, periodNanos), shared.nanos(now, periodNanos));
    long measured = Math.min(2 * slowestNanos, 2 * periodNanos);
    return Math.max(base, measured);
  }

  private void cancelSilenceCheckLocked() {
    if (silenceCheck != null) {
      silenceCheck.cancel(false);
      silenceCheck = null;
    }
  }

  /**
   * The oldest unanswered request may have waited the silence bound: if so, the stream is
   * superseded (still read, sends nothing more) and a new one opened at once.
   */
  private void checkSilence(Call call) {
    synchronized (this) {
      if (silenceCheck == null || call != current) {
        return; // re-armed, or the stream is gone already
      }
      silenceCheck = null;
      long oldest = oldestUnansweredLocked();
      long sentNanos = oldest == 0 ? 0 : sent.sentAt(oldest);
      if (oldest == 0
          || (sentNanos != SentRequests.UNKNOWN && nanoClock.getAsLong() - sentNanos < silenceBoundLocked())) {
        armSilenceCheckLocked(); // answered meanwhile, or a later request is now the oldest
        return;
      }
      if (closing || over || !awaitsAnswers() || !worthResuming()) {
        return;
      }
      current = null;
      superseded.add(call);
      replacingNext = true;
      scheduleReopenLocked(Pushback.ABSENT, true);
    }
  }

  /** The superseded streams, to cancel (outside the lock); none are left. */
  private List<Call> takeSupersededLocked() {
    if (superseded.isEmpty()) {
      return List.of();
    }
    List<Call> taken = List.copyOf(superseded);
    superseded.clear();
    return taken;
  }

  /** A RST_STREAM each (grpc-java's cancel), never a half-close: their replicas release nothing. */
  private void cancelAll(List<Call> calls, String why) {
    for (Call call : calls) {
      call.requests.cancel(why, null);
    }
  }

  private void answer(Call call, Resp response) {
    long moved = SentRequests.UNKNOWN;
    List<Call> done = List.of();
    boolean stale;
    synchronized (this) {
      boolean onCurrent = call == current;
      if (over || (!onCurrent && !superseded.contains(call))) {
        return;
      }
      long sequence = sequenceOf(response);
      long echoedSent = sent.sentAt(sequence);
      // Only while answers are due: a candidate's first answer comes when it leads, not late.
      if (echoedSent != SentRequests.UNKNOWN && awaitsAnswers()) {
        long now = nanoClock.getAsLong();
        slowest.answered(now - echoedSent, now, periodNanos);
        if (onCurrent) {
          shared.answered(now - echoedSent, now, periodNanos);
        }
      }
      if (onCurrent) {
        // Any answer shows the stream works, even one dated before a change (ignored below):
        // the silent streams it replaced are not needed any more.
        replacing = false;
        echoedOnStream = Math.max(echoedOnStream, sequence);
        cancelSilenceCheckLocked();
        armSilenceCheckLocked();
        done = takeSupersededLocked();
      }
      stale = sequence < floorSequence; // dated before a change: what it reports no longer holds
      if (onCurrent && !stale) {
        failures = 0;
      }
      long sentNanos = stale ? SentRequests.UNKNOWN : sent.sentAt(sequence);
      if (sentNanos != SentRequests.UNKNOWN) {
        long candidate = sentNanos + validityOf(response).toNanos();
        // An answer reporting an earlier renewal (or jeopardy) may arrive after a later one.
        if (candidate > deadlineNanos) {
          deadlineNanos = candidate;
          moved = candidate;
          deadlineMoved(candidate);
        }
      }
    }
    cancelAll(done, "superseded by a stream that answers");
    if (stale) {
      return;
    }
    answered(response, moved);
    synchronized (this) {
      armSilenceCheckLocked(); // the answer may have made the holder one that awaits answers (a leader)
    }
  }

  /** {@code pushbackNanos}: the server's refusal ({@link Pushback}); STOP ends it like a final status. */
  private void ended(Call call, Status status, long pushbackNanos) {
    boolean lost = false;
    boolean reopen = false;
    List<Call> done = List.of();
    synchronized (this) {
      if (superseded.remove(call) || call != current || over) {
        return; // a superseded stream's end says nothing: the stream that replaced it will
      }
      current = null;
      cancelSilenceCheckLocked();
      if (!closing && !status.isOk() && !FINAL.contains(status.getCode()) && pushbackNanos != Pushback.STOP
          && worthResuming()) {
        scheduleReopenLocked(pushbackNanos, false);
        reopen = true;
      } else {
        over = true;
        refusedForGood = pushbackNanos == Pushback.STOP && !closing;
        stopRequestsLocked();
        lost = !closing;
        done = takeSupersededLocked();
      }
    }
    cancelAll(done, "the grant is over");
    if (reopen) {
      reconnect.run();
      return;
    }
    ended.complete(status);
    if (lost) {
      endedUnexpectedly(status.isOk() ? unexpectedOk() : status);
    }
  }

  /**
   * Schedules the next stream: at once after a silence (each silence took its bound of time
   * already, which paces them; the failures go on counting, for the backoff of a later end of
   * another kind), after the pushback, or else after the backoff.
   */
  private void scheduleReopenLocked(long pushbackNanos, boolean silent) {
    failures++;
    long backoff = Math.min(MAX_REOPEN_NANOS, FIRST_REOPEN_NANOS << Math.min(failures - 1, 10));
    // A pushback may outlast the guarded deadline: the lifetime's own timer reports the loss
    // then, and the reopen finds nothing worth resuming.
    long wait;
    if (silent) {
      wait = 0;
    } else if (pushbackNanos >= 0) {
      wait = Pushback.jittered(pushbackNanos);
    } else {
      wait = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
    }
    reopening = scheduler.schedule(this::reopen, wait, TimeUnit.NANOSECONDS);
  }

  private void reopen() {
    // A replica that was down a while ago may be up again while gRPC's own reconnect backoff
    // (1 s growing to minutes) still waits: without this, a stream whose replica stops while
    // the other one restarted recently could find no replica before its deadline.
    reconnect.run();
    synchronized (this) {
      reopening = null;
      if (closing || over || current != null) {
        return;
      }
      if (!worthResuming()) {
        // Lost or ended meanwhile, which stopped it already or is about to.
        return;
      }
      openLocked();
    }
  }

  /** Now, on the client's monotonic clock. */
  final long nanoTime() {
    return nanoClock.getAsLong();
  }

  final boolean closing() {
    return closing;
  }

  /**
   * Half-close: the server gives the grant back and ends the stream; completes with how it
   * ended. While no stream is up, a new one names the grant and is half-closed at once.
   */
  final CompletableFuture<Status> halfClose() {
    List<Call> done;
    synchronized (this) {
      done = takeSupersededLocked();
      if (over || closing) {
        closing = true;
        return ended;
      }
      closing = true;
      stopRequestsLocked();
      if (current == null) {
        openLocked();
      }
      try {
        if (current != null) {
          current.requests.onCompleted();
        }
      } catch (IllegalStateException alreadyGone) {
        over = true;
        current = null;
        ended.complete(Status.CANCELLED.withDescription("the stream was already gone"));
      }
    }
    cancelAll(done, "the grant is given back");
    return ended;
  }

  /**
   * After a loss: gives the grant back (half-close) unless the stream already ended for good;
   * after a "do not retry" refusal, by {@link #giveBackWithoutStream()}.
   */
  final void giveBack() {
    boolean refused;
    synchronized (this) {
      refused = refusedForGood;
    }
    if (refused) {
      giveBackWithoutStream();
      return;
    }
    halfClose();
  }

  /** Stops the renewals without giving the grant back (it then runs out). */
  final void cancel(String why) {
    ClientCallStreamObserver<Req> call = null;
    boolean complete = false;
    List<Call> done;
    synchronized (this) {
      closing = true;
      stopRequestsLocked();
      done = takeSupersededLocked();
      if (current != null) {
        call = current.requests;
      } else if (!over) {
        over = true;
        complete = true;
      }
    }
    cancelAll(done, why);
    if (call != null) {
      call.cancel(why, null);
    }
    if (complete) {
      ended.complete(Status.CANCELLED.withDescription(why));
    }
  }

  private void stopRequestsLocked() {
    cancelSilenceCheckLocked();
    if (nextRequest != null) {
      nextRequest.cancel(false);
    }
    if (reopening != null) {
      reopening.cancel(false);
      reopening = null;
    }
  }

  /**
   * One gRPC stream; what a stream that is neither the current one nor a superseded one says
   * is ignored.
   */
  private final class Call implements ClientResponseObserver<Req, Resp> {
    private volatile ClientCallStreamObserver<Req> requests;

    @Override
    public void beforeStart(ClientCallStreamObserver<Req> requestStream) {
      requests = requestStream;
    }

    @Override
    public void onNext(Resp response) {
      answer(this, response);
    }

    @Override
    public void onError(Throwable t) {
      ended(this, CallStatus.of(t), Pushback.of(t));
    }

    @Override
    public void onCompleted() {
      ended(this, Status.OK, Pushback.ABSENT);
    }
  }
}
