package dev.redlockd.election;

import dev.redlockd.engine.InvalidRequestException;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.RequestRules;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Consumer;

/**
 * Leader election on the engine's nodes: a candidate leads while it holds the election's lease
 * (in the engine's election space, apart from the user's locks), its term is the lease's
 * fencing token and its value the lease's owner text. Knows nothing of gRPC.
 */
public final class Elections implements AutoCloseable {
  private final ElectionSpace leases;
  private final RequestRules rules;
  private final ScheduledExecutorService scheduler;
  private final ConcurrentHashMap<String, LeaderWatch> watches = new ConcurrentHashMap<>();

  public Elections(LockEngine engine) {
    this.leases = new LeasesSpace(engine.elections());
    this.rules = engine.elections().rules();
    ScheduledThreadPoolExecutor checks = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "redlockd-elections");
      t.setDaemon(true);
      return t;
    });
    checks.setRemoveOnCancelPolicy(true);
    this.scheduler = checks;
  }

  /**
   * Starts a candidacy; {@link InvalidRequestException} for a bad election name, value, ttl or
   * token. The listener hears {@link Candidacy.Listener#leading} once the candidate leads.
   * {@code token} is the candidate's own (empty: the engine makes one at the grant); with
   * {@code resume}, the candidate renews the leadership its token holds, or hears
   * {@link Candidacy.Listener#lost} with {@link dev.redlockd.engine.LeaseNotHeldException}.
   */
  public Candidacy campaign(String election, String value, Duration ttl, String token, boolean resume, long mark,
      Candidacy.Listener listener) {
    checkCandidacy(election, value, ttl, token, resume);
    Candidacy candidacy = new Candidacy(leases, election, value, ttl, token, resume, mark, listener);
    candidacy.start();
    return candidacy;
  }

  /** {@link #campaign(String, String, Duration, String, boolean, long, Candidacy.Listener)} with a token the engine makes. */
  public Candidacy campaign(String election, String value, Duration ttl, long mark, Candidacy.Listener listener) {
    return campaign(election, value, ttl, "", false, mark, listener);
  }

  private void checkCandidacy(String election, String value, Duration ttl, String token, boolean resume) {
    rules.resource(election);
    rules.owner(election, Objects.requireNonNull(value, "value"));
    rules.ttl(election, ttl);
    if (resume && token.isEmpty()) {
      throw new InvalidRequestException("election '" + election + "': resume needs the candidate's token");
    }
    rules.token(election, Objects.requireNonNull(token, "token"), false);
  }

  /** The rules a candidacy's later requests keep; a null ttl keeps the one in force. */
  public void checkUpdate(String election, String value, Duration ttl) {
    rules.owner(election, Objects.requireNonNull(value, "value"));
    if (ttl != null) {
      rules.ttl(election, ttl);
    }
  }

  /** The current leader, read from the nodes: empty when there is none. */
  public CompletableFuture<Optional<Leader>> leader(String election) {
    return leases.describe(election).thenApply(d -> d.held()
        ? Optional.of(new Leader(d.owner(), d.fencingToken()))
        : Optional.empty());
  }

  /**
   * Tells {@code observer} the current leader (or none) and every change after it, until the
   * returned handle is closed. Observers of one election on this server share one watch.
   * {@code observer} is called on this server's election thread, never on the caller's: it
   * must not block (an observer that falls behind is told the latest state).
   */
  public AutoCloseable observe(String election, Consumer<Optional<Leader>> observer) {
    rules.resource(election);
    watches.compute(election, (name, watch) -> {
      LeaderWatch w = watch;
      if (w == null) {
        w = new LeaderWatch(leases, name, scheduler, scheduler);
        w.start();
      }
      w.add(observer);
      return w;
    });
    return () -> watches.computeIfPresent(election, (name, watch) -> watch.remove(observer) ? null : watch);
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
  }
}
