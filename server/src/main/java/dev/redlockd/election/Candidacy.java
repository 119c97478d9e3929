package dev.redlockd.election;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.KeptLease;
import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.LockEngineException;
import dev.redlockd.engine.QuorumUnavailableException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One candidate in one election: waits for the election's lease (an Acquire that waits as long
 * as the candidacy lives, woken by any release on any server), then leads while the lease is
 * kept alive, and says so to everyone through announcements. The lease's fencing token is the
 * term; the lease's owner text is the leader's value, so a read of the nodes finds both.
 *
 * <p>The candidate may bring its own token: campaigning again with it (its answer was lost, its
 * replica went away) is the same candidacy, and a leader that resumes with it renews the lease
 * it holds (same term) instead of queueing, or learns that it no longer leads.
 */
public final class Candidacy {
  private static final Logger log = LoggerFactory.getLogger(Candidacy.class);
  /** A candidate waits for as long as its caller keeps the campaign open: in effect forever. */
  private static final Duration FOREVER = Duration.ofDays(365L * 100);
  private static final long PROCLAIM_RETRY_MS = 50;

  /** What the candidate's caller hears; called from engine and I/O threads, one call at a time per candidacy. */
  public interface Listener {
    /** Leading: just elected, renewed, or with a new value. */
    void leading(Leadership leadership, long mark);

    /** A renewal missed the quorum; {@code leadership} is the last confirmed one, still valid. */
    void jeopardy(Leadership leadership, LockEngineException cause, long mark);

    /** The candidacy is over without the caller asking: lost, or refused before it began. */
    void lost(LockEngineException cause);

    /**
     * The first renewal of a leadership (just granted, or resumed here) missed the quorum: there
     * is no validity to report yet; the renewals go on quietly for one ttl unless the caller
     * {@link Candidacy#abandon}s the candidacy first.
     */
    default void unconfirmed(LockEngineException cause, long mark) {}
  }

  /** The caller's leadership as last confirmed: its term, the value everyone sees, and its validity. */
  public record Leadership(long term, String value, Duration validity) {}

  private final ElectionSpace elections;
  private final String election;
  private final Listener listener;
  /** The caller brought its own token: a grant the caller did not hear of is left to it, as with Acquire. */
  private final boolean callersToken;
  private final boolean resume;

  // All guarded by this.
  /** The value asked for last; {@link #value} until a proclaim is confirmed. */
  private String wanted;
  private String value;
  private Duration ttl;
  private long mark;
  private CompletableFuture<Grant> acquiring;
  private ElectionSpace.Kept kept;
  /** The candidate token: the caller's, or the engine's once granted (empty until then). */
  private String token;
  /**
   * Leading as the caller hears it: confirmed by a renewal of the lease, whose answer is dated by
   * the caller's mark from before that renewal began. (A grant after a long wait is not dated:
   * the mark read when it arrives may be newer than the round that granted it.)
   */
  private boolean leading;
  /** This term's leadership was announced to observers, so its end must be too. */
  private boolean announced;
  /** A resumed leadership proclaims the caller's value once it is confirmed: the stored one may be older. */
  private boolean confirmValue;
  private long term;
  /** Proclaims made within this term, for observers to order them. */
  private long seq;
  private boolean proclaiming;
  private boolean ended;

  Candidacy(ElectionSpace elections, String election, String value, Duration ttl, String token, boolean resume,
      long mark, Listener listener) {
    this.elections = elections;
    this.election = election;
    this.wanted = value;
    this.value = value;
    this.ttl = ttl;
    this.token = token;
    this.callersToken = !token.isEmpty();
    this.resume = resume;
    this.mark = mark;
    this.listener = listener;
  }

  void start() {
    if (resume) {
      ElectionSpace.Kept lease;
      synchronized (this) {
        confirmValue = true;
        // The renewal that confirms the leadership, or finds it gone (NOT_FOUND); never a wait in line.
        kept = elections.keep(election, token, ttl, new Renewals());
        lease = kept;
      }
      lease.renewNow(null, mark);
      return;
    }
    CompletableFuture<Grant> acquire = elections.acquire(election, ttl, FOREVER, token, value);
    synchronized (this) {
      acquiring = acquire;
    }
    acquire.whenComplete(this::granted);
  }

  /** Whether {@code candidateToken} is this candidacy's own token. */
  public synchronized boolean hasToken(String candidateToken) {
    return callersToken && token.equals(candidateToken);
  }

  public String election() {
    return election;
  }

  /** Still in line: not leading, not resuming, not ended. */
  public synchronized boolean waiting() {
    return !ended && kept == null;
  }

  /**
   * A later request of the caller: a new value is proclaimed (at once when leading, else when
   * elected), a new ttl applies from the next renewal, and a leader renews at once.
   */
  public void update(String newValue, Duration newTtl, long newMark) {
    ElectionSpace.Kept renew;
    boolean proclaim;
    synchronized (this) {
      if (ended) {
        return;
      }
      mark = Math.max(mark, newMark);
      if (newTtl != null) {
        ttl = newTtl;
      }
      wanted = newValue;
      renew = kept;
      proclaim = leading && !wanted.equals(value) && !proclaiming;
      proclaiming |= proclaim;
    }
    if (proclaim) {
      proclaim();
    } else if (renew != null) {
      renew.renewNow(newTtl, newMark);
    }
  }

  /** Resigns (or withdraws): the lease is released and its end announced. Idempotent. */
  public CompletableFuture<Void> resign() {
    return end(true);
  }

  /**
   * The caller went away, or this server is shutting down: renewals stop and the leadership runs
   * out at its validity (its leader may still believe in it, and may resume it elsewhere).
   */
  public void abandon() {
    end(false);
  }

  private CompletableFuture<Void> end(boolean release) {
    ElectionSpace.Kept lease;
    long endedTerm;
    boolean wasAnnounced;
    String leaseToken;
    synchronized (this) {
      if (ended) {
        return CompletableFuture.completedFuture(null);
      }
      ended = true;
      lease = kept;
      kept = null;
      endedTerm = term;
      wasAnnounced = announced;
      leaseToken = token;
      if (lease == null) {
        // A grant made meanwhile is released by the engine when it chose the token; one under
        // the caller's token is left to the caller, unless the caller is withdrawing.
        acquiring.cancel(false);
        if (release && callersToken) {
          elections.release(election, leaseToken);
        }
        return CompletableFuture.completedFuture(null);
      }
    }
    if (!release) {
      lease.stop();
      return CompletableFuture.completedFuture(null);
    }
    if (!wasAnnounced) {
      // A resume not yet confirmed: nobody was told of it, and the caller asked to give it back.
      return lease.release().handle((released, failure) -> null);
    }
    return lease.release().handle((released, failure) -> {
      if (failure != null) {
        log.debug("election '{}': resigning: {}", election, failure.getMessage());
      }
      announce(Announcement.vacant(endedTerm));
      return null;
    });
  }

  private void granted(Grant grant, Throwable failure) {
    if (failure != null) {
      Throwable cause = unwrap(failure);
      boolean withdrawn;
      synchronized (this) {
        withdrawn = ended;
        ended = true;
      }
      if (!withdrawn && !(cause instanceof CancellationException)) {
        listener.lost(asEngineException(cause));
      }
      return;
    }
    Leader elected;
    long at;
    ElectionSpace.Kept lease;
    synchronized (this) {
      if (ended) {
        // Withdrawn while the grant was on its way, after the cancel could stop it.
        elections.release(election, grant.token());
        return;
      }
      token = grant.token();
      term = grant.fencingToken();
      announced = true;
      seq = 0;
      kept = elections.keep(election, token, ttl, new Renewals());
      lease = kept;
      elected = new Leader(value, term);
      at = mark;
    }
    announce(Announcement.leading(elected, 0));
    // The caller hears it leads from the first renewal, at once: its answer is dated by a mark
    // from before it began, which the grant's cannot be. It also confirms the grant on the nodes
    // the grant did not wait for.
    lease.renewNowAtOnce(at);
  }

  /**
   * Refreshes the lease under its own token with the wanted value as its owner text: same term,
   * new value. Only a refresh that finds the lease gone ends the leadership; one that reached
   * no quorum while the lease may still be held (nodes frozen, a rival's passing write on
   * some) is tried again while leading. The renewals decide, as ever, when a lease that cannot
   * be confirmed has run out.
   */
  private void proclaim() {
    String next;
    String leaseToken;
    Duration leaseTtl;
    long at; // before the refresh begins: the caller dates its validity from this mark's request
    synchronized (this) {
      if (ended) {
        return;
      }
      next = wanted;
      leaseToken = token;
      leaseTtl = ttl;
      at = mark;
    }
    elections.refresh(election, leaseToken, leaseTtl, next).whenComplete((grant, failure) -> {
      Throwable cause = failure == null ? null : unwrap(failure);
      if (cause instanceof LeaseNotHeldException) {
        lostBy(new LeaseNotHeldException("election '" + election + "': the leadership is no longer held"));
        return;
      }
      if (cause != null) {
        // The value did not reach a quorum; try again while leading.
        log.debug("election '{}': proclaiming a new value: {}", election, cause.getMessage());
        CompletableFuture.delayedExecutor(PROCLAIM_RETRY_MS, TimeUnit.MILLISECONDS).execute(this::proclaim);
        return;
      }
      Leadership leadership;
      boolean again;
      long atSeq;
      synchronized (this) {
        if (ended) {
          return;
        }
        value = next;
        term = Terms.later(term, grant.fencingToken());
        atSeq = ++seq;
        leadership = new Leadership(term, value, grant.validity());
        again = !wanted.equals(value);
        proclaiming = again;
      }
      announce(Announcement.leading(new Leader(leadership.value(), leadership.term()), atSeq));
      listener.leading(leadership, at);
      if (again) {
        proclaim();
      }
    });
  }

  private void lostBy(LockEngineException cause) {
    ElectionSpace.Kept lease;
    long endedTerm;
    boolean wasAnnounced;
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      lease = kept;
      kept = null;
      endedTerm = term;
      wasAnnounced = announced;
    }
    if (lease != null) {
      lease.stop();
    }
    if (wasAnnounced) {
      // A resume that found the leadership gone announces nothing: someone else may lead now.
      announce(Announcement.vacant(endedTerm));
    }
    listener.lost(cause);
  }

  /**
   * The first proclaim number of a resumed leadership: the wall clock in microseconds, so that
   * it comes after the 0, 1, 2, ... its first replica numbered, and after an earlier resume's on
   * a replica whose clock is not far ahead. Ordering, not timing: a monotonic clock is not
   * shared between replicas.
   */
  private static long resumedSeq() {
    return TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
  }

  private void announce(Announcement announcement) {
    elections.announceChange(election, announcement.encode());
  }

  /** The kept lease's reports, in the words of leadership. */
  private final class Renewals implements KeptLease.Listener {
    @Override
    public void held(Grant lease, long at) {
      Leadership leadership;
      boolean newTerm;
      boolean proclaim = false;
      long atSeq;
      synchronized (Candidacy.this) {
        if (ended) {
          return;
        }
        if (!leading) {
          leading = true;
          if (!announced) {
            // Resumed: proclaims of this term made through the replica this leader left were
            // numbered from 0 up; observers order them by (term, seq), so these come after.
            seq = resumedSeq();
            announced = true;
          }
          proclaim = (confirmValue || !wanted.equals(value)) && !proclaiming;
          proclaiming |= proclaim;
        }
        // After a fault (or on a resume) a renewal may report a higher fencing token: the term moves with it.
        newTerm = Terms.after(lease.fencingToken(), term);
        term = Terms.later(term, lease.fencingToken());
        atSeq = seq;
        leadership = new Leadership(term, value, lease.validity());
      }
      if (newTerm) {
        announce(Announcement.leading(new Leader(leadership.value(), leadership.term()), atSeq));
      }
      listener.leading(leadership, at);
      if (proclaim) {
        proclaim();
      }
    }

    @Override
    public void jeopardy(Grant lease, LockEngineException cause, long at) {
      Leadership leadership;
      synchronized (Candidacy.this) {
        if (ended) {
          return;
        }
        leadership = new Leadership(term, value, lease.validity());
      }
      listener.jeopardy(leadership, cause, at);
    }

    @Override
    public void lost(LockEngineException cause) {
      lostBy(cause);
    }

    @Override
    public void unconfirmed(LockEngineException cause, long at) {
      synchronized (Candidacy.this) {
        if (ended) {
          return;
        }
      }
      listener.unconfirmed(cause, at);
    }
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  private LockEngineException asEngineException(Throwable cause) {
    if (cause instanceof LockEngineException e) {
      return e;
    }
    log.error("campaign in election '{}' failed unexpectedly", election, cause);
    return new QuorumUnavailableException("election '" + election + "': campaign failed ("
        + cause.getClass().getSimpleName() + ")");
  }

  @Override
  public String toString() {
    return "Candidacy[election=" + election + "]";
  }
}
