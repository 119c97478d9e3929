package dev.redlockd.sim;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.KeptLease;
import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.LockEngine;
import dev.redlockd.engine.LockEngineException;
import dev.redlockd.engine.LockToken;
import dev.redlockd.engine.QuorumUnavailableException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A lock user, as the thin clients behave: its own token (mostly), Acquire retried with the
 * same token after UNAVAILABLE or its own deadline, the token given back when it gives up,
 * then one of: a short critical section, Extend calls, or a KeepAlive lease renewed on the
 * client's asks; now and then it vanishes without releasing. Each call goes to a replica
 * picked at random. Its clock is the simulation's.
 */
final class SimClient {
  private static final int ATTEMPTS = 3;
  private static final long CALL_TIMEOUT_NANOS = 300_000_000L;

  private final String name;
  private final SimLoop loop;
  private final List<LockEngine> replicas;
  private final List<String> resources;
  private final SimChecker checker;
  private final Random random;
  private final SecureRandom tokens;
  private final Runnable counted;
  private boolean stopping;
  private boolean idle = true;

  SimClient(String name, SimLoop loop, List<LockEngine> replicas, List<String> resources, SimChecker checker,
      Random random, Runnable counted) {
    this.name = name;
    this.loop = loop;
    this.replicas = replicas;
    this.resources = resources;
    this.checker = checker;
    this.random = random;
    this.tokens = new SeededRandom(random.nextLong());
    this.counted = counted;
  }

  void start() {
    loop.after(random.nextInt(5_000_000), this::next);
  }

  /** Finishes what it holds (releasing it) and takes no more locks. */
  void stop() {
    stopping = true;
  }

  boolean idle() {
    return idle;
  }

  private LockEngine replica() {
    return replicas.get(random.nextInt(replicas.size()));
  }

  private long ms(long millis) {
    return millis * 1_000_000;
  }

  private void next() {
    if (stopping) {
      idle = true;
      return;
    }
    idle = false;
    String resource = resources.get(random.nextInt(resources.size()));
    Duration ttl = Duration.ofMillis(100 + random.nextInt(900));
    Duration wait = random.nextInt(3) == 0 ? Duration.ZERO : Duration.ofMillis(random.nextInt(500));
    boolean ownToken = random.nextInt(10) < 7;
    String token = ownToken ? LockToken.generate(tokens) : "";
    attempt(resource, ttl, wait, token, 1);
  }

  private void later(long nanos) {
    loop.after(nanos, this::next);
  }

  private void attempt(String resource, Duration ttl, Duration wait, String token, int n) {
    long sentAt = loop.now();
    counted.run();
    checker.event(() -> name + " acquire " + resource + " attempt " + n);
    CompletableFuture<Grant> call = replica().acquire(resource, ttl, wait, token);
    boolean[] gaveUp = {false};
    SimLoop.Event deadline = loop.after(wait.toNanos() + CALL_TIMEOUT_NANOS, () -> {
      gaveUp[0] = true;
      call.cancel(false); // DEADLINE_EXCEEDED: the answer, if any, never reaches this client
    });
    call.whenComplete((lease, failure) -> {
      deadline.cancel();
      if (gaveUp[0] || failure != null) {
        if (failure != null) {
          checker.failed(name, "acquire", failure);
        }
        Throwable cause = unwrap(failure);
        boolean unknown = gaveUp[0] || cause instanceof QuorumUnavailableException;
        if (unknown && !token.isEmpty()) {
          if (n < ATTEMPTS) {
            loop.after(ms(10L << n), () -> attempt(resource, ttl, wait, token, n + 1));
            return;
          }
          giveBack(resource, token);
        }
        later(ms(1 + random.nextInt(20)));
        return;
      }
      checker.granted(name, resource, lease.token(), sentAt, lease.validity().toNanos(), lease.fencingToken());
      hold(resource, lease, ttl, sentAt);
    });
  }

  /** Rule 3: an Acquire whose outcome is unknown and that is given up on gets its token released. */
  private void giveBack(String resource, String token) {
    counted.run();
    checker.excuse(token); // fire and forget: it may be lost, and the lock then runs out
    replica().release(resource, token).whenComplete((r, f) -> {
      if (f != null) {
        checker.failed(name, "release (given up)", f);
      }
    });
  }

  private void hold(String resource, Grant lease, Duration ttl, long sentAt) {
    int how = random.nextInt(40);
    long validity = lease.validity().toNanos();
    if (how == 0) {
      checker.excuse(lease.token());
      checker.ended(name, resource, lease.token()); // vanishes: the lock runs out at its ttl
      later(ms(1));
    } else if (how < 34) {
      long section = random.nextInt(4) == 0 ? (long) (random.nextDouble() * 0.8 * validity) : random.nextInt(20_000_000);
      loop.after(Math.min(section, validity / 2), () -> release(resource, lease.token(), 1));
    } else if (how < 37) {
      extend(resource, lease.token(), ttl, sentAt + validity, 1 + random.nextInt(3));
    } else {
      keepAlive(resource, lease.token(), ttl, sentAt + validity);
    }
  }

  private void extend(String resource, String token, Duration ttl, long until, int left) {
    long due = Math.max(0, (until - loop.now()) / 3);
    loop.after(due, () -> {
      if (loop.now() >= until) {
        checker.ended(name, resource, token);
        release(resource, token, 1);
        return;
      }
      if (left == 0 || stopping) {
        release(resource, token, 1);
        return;
      }
      long sentAt = loop.now();
      counted.run();
      replica().extend(resource, token, ttl).whenComplete((lease, failure) -> {
        if (failure != null) {
          checker.failed(name, "extend", failure);
          if (unwrap(failure) instanceof LeaseNotHeldException) {
            checker.ended(name, resource, token);
            later(ms(1));
          } else {
            extend(resource, token, ttl, until, left);
          }
          return;
        }
        long renewed = sentAt + lease.validity().toNanos();
        checker.renewed(name, resource, token, renewed, lease.fencingToken());
        extend(resource, token, ttl, Math.max(until, renewed), left - 1);
      });
    });
  }

  /** A KeepAlive stream: the client asks every ttl/4 and counts each answer from its ask. */
  private void keepAlive(String resource, String token, Duration ttl, long until) {
    Map<Long, Long> asked = new HashMap<>();
    long[] seq = {0};
    boolean[] over = {false};
    long[] validUntil = {until};
    KeptLease[] kept = new KeptLease[1];
    kept[0] = replica().keep(resource, token, ttl, new KeptLease.Listener() {
      @Override
      public void held(Grant lease, long mark) {
        Long at = asked.get(mark);
        if (at != null && !over[0]) {
          long renewed = at + lease.validity().toNanos();
          validUntil[0] = Math.max(validUntil[0], renewed);
          checker.renewed(name, resource, token, renewed, lease.fencingToken());
        }
      }

      @Override
      public void jeopardy(Grant lease, LockEngineException cause, long mark) {}

      @Override
      public void lost(LockEngineException cause) {
        if (!over[0]) {
          over[0] = true;
          checker.ended(name, resource, token);
          checker.failed(name, "keep-alive", cause);
          later(ms(1));
        }
      }
    });
    long stopAt = loop.now() + (long) ((0.5 + random.nextDouble() * 1.5) * ttl.toNanos());
    Runnable[] ask = new Runnable[1];
    ask[0] = () -> {
      if (over[0]) {
        return;
      }
      if (loop.now() >= stopAt || stopping || loop.now() >= validUntil[0]) {
        over[0] = true;
        checker.ended(name, resource, token);
        counted.run();
        kept[0].release().whenComplete((r, f) -> {
          if (f != null) {
            checker.failed(name, "release (keep-alive)", f);
            checker.excuse(token);
          }
          later(ms(1 + random.nextInt(20)));
        });
        return;
      }
      asked.put(++seq[0], loop.now());
      counted.run();
      kept[0].renewNow(null, seq[0]);
      loop.after(ttl.toNanos() / 4, ask[0]);
    };
    ask[0].run();
  }

  private void release(String resource, String token, int n) {
    if (n == 1) {
      checker.ended(name, resource, token);
    }
    counted.run();
    replica().release(resource, token).whenComplete((released, failure) -> {
      if (failure == null) {
        later(ms(1 + random.nextInt(20)));
        return;
      }
      checker.failed(name, "release", failure);
      if (n < ATTEMPTS) {
        loop.after(ms(10L << n), () -> release(resource, token, n + 1));
      } else {
        checker.excuse(token); // it runs out at its ttl
        later(ms(1));
      }
    });
  }

  static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Tokens from a seeded generator, so a seed replays the same tokens. */
  static final class SeededRandom extends SecureRandom {
    private final Random random;

    SeededRandom(long seed) {
      super(new byte[0]);
      this.random = new Random(seed);
    }

    @Override
    public void nextBytes(byte[] bytes) {
      random.nextBytes(bytes);
    }

    @Override
    public long nextLong() {
      return random.nextLong();
    }
  }
}
