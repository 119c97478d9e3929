package dev.redlockd.sim;

import dev.redlockd.engine.EngineConfig;
import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.LockHeldException;
import dev.redlockd.engine.LockToken;
import dev.redlockd.engine.QuorumUnavailableException;
import dev.redlockd.node.LuaScript;
import dev.redlockd.node.RedisNode;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A MUTANT, for the simulation only: the obvious semaphore that does not bound its holders.
 * Each node counts the holders of R and admits a token while fewer than N hold it there; a
 * permit is granted when a majority of nodes admit it, for the ttl less the time the round
 * took and the drift allowance, as a Redlock lease. A round that misses the majority gives its
 * admissions back. Every node keeps its count at or under N, yet for N >= 2 the majorities of
 * different holders need not intersect in a full node: with 5 nodes and N = 2, H1 on {A,B,C},
 * H2 on {A,D,E} and H3 on {B,C,D} all hold at once. The semaphore simulation must catch it.
 */
final class NaiveSemaphore implements SimSemaphore {
  private static final LuaScript ADMIT = LuaScript.load(NaiveSemaphore.class, "naive_admit");
  private static final LuaScript EXTEND = LuaScript.load(NaiveSemaphore.class, "naive_extend");
  private static final LuaScript RELEASE = LuaScript.load(NaiveSemaphore.class, "naive_release");

  private final SimLoop loop;
  private final List<RedisNode> nodes;
  private final EngineConfig config;
  private final Random jitter;
  private final int quorum;
  private final SecureRandom tokens;

  NaiveSemaphore(SimLoop loop, List<RedisNode> nodes, EngineConfig config, Random jitter) {
    this.loop = loop;
    this.nodes = nodes;
    this.config = config;
    this.jitter = jitter;
    this.quorum = nodes.size() / 2 + 1;
    this.tokens = new SimClient.SeededRandom(jitter.nextLong());
  }

  private String index(String resource) {
    return config.keyPrefix() + "naive:{" + resource + "}:index";
  }

  private String holderPrefix(String resource) {
    return config.keyPrefix() + "naive:{" + resource + "}:h:";
  }

  /** Replies per node: 1 yes, 0 no, null no answer (error or timeout). */
  private CompletableFuture<List<Long>> round(LuaScript script, List<String> keys, List<String> args) {
    List<CompletableFuture<Long>> calls = new ArrayList<>();
    for (RedisNode node : nodes) {
      calls.add(node.eval(script, keys, args).handle((r, f) -> f == null && r instanceof Long l ? l : null));
    }
    return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> calls.stream().map(CompletableFuture::join).toList());
  }

  private long validity(Duration ttl, long startedAt) {
    return ttl.toNanos() - (loop.now() - startedAt) - config.drift(ttl).toNanos();
  }

  @Override
  public CompletableFuture<PermitGrant> acquire(String resource, int permits, Duration ttl, Duration wait,
      String token) {
    CompletableFuture<PermitGrant> result = new CompletableFuture<>();
    String leaseToken = token.isEmpty() ? LockToken.generate(tokens) : token;
    attempt(resource, permits, ttl, leaseToken, loop.now() + wait.toNanos(), result);
    return result;
  }

  private void attempt(String resource, int permits, Duration ttl, String token, long until,
      CompletableFuture<PermitGrant> result) {
    if (result.isDone()) {
      return; // the caller gave up
    }
    long startedAt = loop.now();
    String holder = holderPrefix(resource);
    round(ADMIT, List.of(index(resource)), List.of(token, Long.toString(ttl.toMillis()), Integer.toString(permits),
        holder)).thenAccept(replies -> {
          long yes = replies.stream().filter(r -> r != null && r == 1).count();
          long silent = replies.stream().filter(r -> r == null).count();
          long validity = validity(ttl, startedAt);
          if (yes >= quorum && validity > 0) {
            result.complete(new PermitGrant(resource, token, 0, validity, 0));
            return;
          }
          giveBack(resource, token);
          if (loop.now() < until) {
            long delay = config.retryDelay().toNanos() + jitter.nextInt((int) config.retryDelay().toNanos() + 1);
            loop.after(delay, () -> attempt(resource, permits, ttl, token, until, result));
          } else if (yes + silent >= quorum) {
            result.completeExceptionally(new QuorumUnavailableException("semaphore '" + resource
                + "': no majority answered"));
          } else {
            result.completeExceptionally(new LockHeldException(resource, (int) yes, nodes.size()));
          }
        });
  }

  private void giveBack(String resource, String token) {
    round(RELEASE, List.of(holderPrefix(resource) + token), List.of(token));
  }

  @Override
  public CompletableFuture<PermitGrant> extend(String resource, int permit, String token, Duration ttl) {
    long startedAt = loop.now();
    return round(EXTEND, List.of(holderPrefix(resource) + token), List.of(token, Long.toString(ttl.toMillis())))
        .thenCompose(replies -> {
          long yes = replies.stream().filter(r -> r != null && r == 1).count();
          long silent = replies.stream().filter(r -> r == null).count();
          long validity = validity(ttl, startedAt);
          if (yes >= quorum && validity > 0) {
            return CompletableFuture.completedFuture(new PermitGrant(resource, token, 0, validity, 0));
          }
          return CompletableFuture.failedFuture(yes + silent >= quorum
              ? new QuorumUnavailableException("semaphore '" + resource + "': renewal reached no majority")
              : new LeaseNotHeldException(resource, (int) yes, quorum));
        });
  }

  @Override
  public CompletableFuture<Boolean> release(String resource, int permit, String token) {
    return round(RELEASE, List.of(holderPrefix(resource) + token), List.of(token))
        .thenApply(replies -> replies.stream().anyMatch(r -> r != null && r == 1));
  }

  @Override
  public Kept keep(String resource, int permit, String token, Duration ttl, KeptListener listener) {
    boolean[] over = {false};
    return new Kept() {
      @Override
      public void renewNow(long mark) {
        extend(resource, permit, token, ttl).whenComplete((grant, failure) -> {
          if (over[0]) {
            return;
          }
          if (failure == null) {
            listener.held(grant, mark);
          } else if (SimClient.unwrap(failure) instanceof LeaseNotHeldException) {
            over[0] = true;
            listener.lost(failure);
          } // else in jeopardy: the holder's own deadline decides
        });
      }

      @Override
      public CompletableFuture<Boolean> release() {
        over[0] = true;
        return NaiveSemaphore.this.release(resource, permit, token);
      }
    };
  }

  @Override
  public Set<String> holdersOn(SimHost host, String resource) {
    String prefix = holderPrefix(resource);
    Set<String> tokens = new HashSet<>();
    for (String key : host.redis.keyspace().keys()) {
      if (key.startsWith(prefix)) {
        tokens.add(key.substring(prefix.length()));
      }
    }
    return tokens;
  }
}
