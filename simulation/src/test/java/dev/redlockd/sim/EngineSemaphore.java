package dev.redlockd.sim;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.KeptLease;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.LockEngineException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** The real engine's permits (one replica), as the semaphore workload drives them. */
final class EngineSemaphore implements SimSemaphore, AutoCloseable {
  private final LockEngine engine;
  private final Map<String, Integer> limits;
  private final String prefix;

  EngineSemaphore(LockEngine engine, Map<String, Integer> limits, String prefix) {
    this.engine = engine;
    this.limits = limits;
    this.prefix = prefix;
  }

  private static PermitGrant of(Grant grant) {
    return new PermitGrant(grant.resource(), grant.token(), grant.permit(), grant.validity().toNanos(),
        grant.fencingToken());
  }

  @Override
  public CompletableFuture<PermitGrant> acquire(String resource, int permits, Duration ttl, Duration wait,
      String token) {
    return engine.acquirePermit(resource, permits, ttl, wait, token, "", "", null).thenApply(EngineSemaphore::of);
  }

  @Override
  public CompletableFuture<PermitGrant> extend(String resource, int permit, String token, Duration ttl) {
    return engine.extend(resource, permit, token, ttl).thenApply(EngineSemaphore::of);
  }

  /**
   * Permit 0: a caller that gave up on an Acquire does not know which permit it may have been
   * granted, so it gives back each of them under its token.
   */
  @Override
  public CompletableFuture<Boolean> release(String resource, int permit, String token) {
    if (permit != 0) {
      return engine.release(resource, permit, token);
    }
    List<CompletableFuture<Boolean>> all = new ArrayList<>();
    for (int k = 1; k <= limits.get(resource); k++) {
      all.add(engine.release(resource, k, token));
    }
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> all.stream().anyMatch(CompletableFuture::join));
  }

  @Override
  public Kept keep(String resource, int permit, String token, Duration ttl, KeptListener listener) {
    KeptLease kept = engine.keep(resource, permit, token, ttl, new KeptLease.Listener() {
      @Override
      public void held(Grant lease, long mark) {
        listener.held(of(lease), mark);
      }

      @Override
      public void jeopardy(Grant lease, LockEngineException cause, long mark) {}

      @Override
      public void lost(LockEngineException cause) {
        listener.lost(cause);
      }
    });
    return new Kept() {
      @Override
      public void renewNow(long mark) {
        kept.renewNow(null, mark);
      }

      @Override
      public CompletableFuture<Boolean> release() {
        return kept.release();
      }
    };
  }

  /** Tokens in the permit keys of the semaphore (any node, voting or not: see {@link #votes}). */
  @Override
  public Set<String> holdersOn(SimHost host, String resource) {
    SimKeyspace keys = host.redis.keyspace();
    Set<String> tokens = new HashSet<>();
    for (int k = 1; k <= limits.get(resource); k++) {
      Object value = keys.execute("GET", prefix + "semaphore:{" + resource + "}:permit:" + k);
      if (value != null) {
        String text = value.toString();
        int space = text.indexOf(' ');
        tokens.add(space < 0 ? text : text.substring(0, space));
      }
    }
    return tokens;
  }

  /** A node without its incarnation key (restarted empty, quarantined) holds permits but does not vote. */
  @Override
  public boolean votes(SimHost host) {
    return Long.valueOf(1).equals(host.redis.keyspace().execute("EXISTS", prefix + "node:incarnation"));
  }

  @Override
  public void close() {
    engine.close();
  }
}
