package dev.redlockd.sim;

import dev.redlockd.engine.LeaseNotHeldException;
import dev.redlockd.engine.LockToken;
import dev.redlockd.engine.QuorumUnavailableException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * A permit user, following the client rules as {@link SimClient} does for locks: its own token
 * (mostly), Acquire retried with the same token after UNAVAILABLE or its own deadline, the token
 * given back when it gives up, then a short section, Extend calls, or a KeepAlive renewed on its
 * asks; now and then it vanishes without releasing. Each call goes to a replica at random.
 */
final class SemClient {
  private static final int ATTEMPTS = 3;
  private static final long CALL_TIMEOUT_NANOS = 300_000_000L;

  private final String name;
  private final SimLoop loop;
  private final List<SimSemaphore> replicas;
  private final Map<String, Integer> semaphores;
  private final List<String> names;
  private final SemChecker checker;
  private final Random random;
  private final SecureRandom tokens;
  private final Runnable counted;
  private boolean stopping;
  private boolean idle = true;

  SemClient(String name, SimLoop loop, List<SimSemaphore> replicas, Map<String, Integer> semaphores,
      SemChecker checker, Random random, Runnable counted) {
    this.name = name;
    this.loop = loop;
    this.replicas = replicas;
    this.semaphores = semaphores;
    this.names = semaphores.keySet().stream().sorted().toList();
    this.checker = checker;
    this.random = random;
    this.tokens = new SimClient.SeededRandom(random.nextLong());
    this.counted = counted;
  }

  void start() {
    loop.after(random.nextInt(5_000_000), this::next);
  }

  void stop() {
    stopping = true;
  }

  boolean idle() {
    return idle;
  }

  private SimSemaphore replica() {
    return replicas.get(random.nextInt(replicas.size()));
  }

  private static long ms(long millis) {
    return millis * 1_000_000;
  }

  private void later(long nanos) {
    loop.after(nanos, this::next);
  }

  private void next() {
    if (stopping) {
      idle = true;
      return;
    }
    idle = false;
    String resource = names.get(random.nextInt(names.size()));
    Duration ttl = Duration.ofMillis(100 + random.nextInt(900));
    Duration wait = random.nextInt(3) == 0 ? Duration.ZERO : Duration.ofMillis(random.nextInt(500));
    String token = random.nextInt(10) < 7 ? LockToken.generate(tokens) : "";
    attempt(resource, ttl, wait, token, 1);
  }

  private void attempt(String resource, Duration ttl, Duration wait, String token, int n) {
    long sentAt = loop.now();
    counted.run();
    checker.base().event(() -> name + " acquire permit of " + resource + " attempt " + n);
    CompletableFuture<PermitGrant> call = replica().acquire(resource, semaphores.get(resource), ttl, wait, token);
    boolean[] gaveUp = {false};
    SimLoop.Event deadline = loop.after(wait.toNanos() + CALL_TIMEOUT_NANOS, () -> {
      gaveUp[0] = true;
      call.cancel(false); // DEADLINE_EXCEEDED: the answer, if any, never reaches this client
    });
    call.whenComplete((grant, failure) -> {
      deadline.cancel();
      if (gaveUp[0] || failure != null) {
        if (failure != null) {
          checker.base().failed(name, "acquire permit", failure);
        }
        boolean unknown = gaveUp[0] || SimClient.unwrap(failure) instanceof QuorumUnavailableException;
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
      checker.granted(name, grant, sentAt);
      hold(grant, ttl, sentAt);
    });
  }

  /** Rule 3: an Acquire whose outcome is unknown and that is given up on gets its token released. */
  private void giveBack(String resource, String token) {
    counted.run();
    checker.base().excuse(token); // fire and forget: it may be lost, and the permit then runs out
    replica().release(resource, 0, token).whenComplete((r, f) -> {
      if (f != null) {
        checker.base().failed(name, "release (given up)", f);
      }
    });
  }

  private void hold(PermitGrant grant, Duration ttl, long sentAt) {
    int how = random.nextInt(40);
    long validity = grant.validityNanos();
    if (how == 0) {
      checker.base().excuse(grant.token());
      checker.ended(name, grant.resource(), grant.token()); // vanishes: the permit runs out at its ttl
      later(ms(1));
    } else if (how < 30) {
      long section = random.nextInt(4) == 0 ? (long) (random.nextDouble() * 0.8 * validity) : random.nextInt(20_000_000);
      loop.after(Math.min(section, validity / 2), () -> release(grant, 1));
    } else if (how < 35) {
      extend(grant, ttl, sentAt + validity, 1 + random.nextInt(3));
    } else {
      keepAlive(grant, ttl, sentAt + validity);
    }
  }

  private void extend(PermitGrant grant, Duration ttl, long until, int left) {
    long due = Math.max(0, (until - loop.now()) / 3);
    loop.after(due, () -> {
      if (loop.now() >= until) {
        checker.ended(name, grant.resource(), grant.token());
        release(grant, 1);
        return;
      }
      if (left == 0 || stopping) {
        release(grant, 1);
        return;
      }
      long sentAt = loop.now();
      counted.run();
      replica().extend(grant.resource(), grant.permit(), grant.token(), ttl).whenComplete((renewed, failure) -> {
        if (failure != null) {
          checker.base().failed(name, "extend permit", failure);
          if (SimClient.unwrap(failure) instanceof LeaseNotHeldException) {
            checker.ended(name, grant.resource(), grant.token());
            later(ms(1));
          } else {
            extend(grant, ttl, until, left);
          }
          return;
        }
        long to = sentAt + renewed.validityNanos();
        checker.renewed(name, renewed, to);
        extend(grant, ttl, Math.max(until, to), left - 1);
      });
    });
  }

  /** A KeepAlive stream: the client asks every ttl/4 and counts each answer from its ask. */
  private void keepAlive(PermitGrant grant, Duration ttl, long until) {
    Map<Long, Long> asked = new HashMap<>();
    long[] seq = {0};
    boolean[] over = {false};
    long[] validUntil = {until};
    String resource = grant.resource();
    String token = grant.token();
    SimSemaphore.Kept kept = replica().keep(resource, grant.permit(), token, ttl, new SimSemaphore.KeptListener() {
      @Override
      public void held(PermitGrant renewed, long mark) {
        Long at = asked.get(mark);
        if (at != null && !over[0]) {
          long to = at + renewed.validityNanos();
          validUntil[0] = Math.max(validUntil[0], to);
          checker.renewed(name, renewed, to);
        }
      }

      @Override
      public void lost(Throwable cause) {
        if (!over[0]) {
          over[0] = true;
          checker.ended(name, resource, token);
          checker.base().failed(name, "keep-alive permit", cause);
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
        kept.release().whenComplete((r, f) -> {
          if (f != null) {
            checker.base().failed(name, "release (keep-alive)", f);
            checker.base().excuse(token);
          }
          later(ms(1 + random.nextInt(20)));
        });
        return;
      }
      asked.put(++seq[0], loop.now());
      counted.run();
      kept.renewNow(seq[0]);
      loop.after(ttl.toNanos() / 4, ask[0]);
    };
    ask[0].run();
  }

  private void release(PermitGrant grant, int n) {
    if (n == 1) {
      checker.ended(name, grant.resource(), grant.token());
    }
    counted.run();
    replica().release(grant.resource(), grant.permit(), grant.token()).whenComplete((released, failure) -> {
      if (failure == null) {
        later(ms(1 + random.nextInt(20)));
        return;
      }
      checker.base().failed(name, "release permit", failure);
      if (n < ATTEMPTS) {
        loop.after(ms(10L << n), () -> release(grant, n + 1));
      } else {
        checker.base().excuse(grant.token());
        later(ms(1));
      }
    });
  }
}
