package dev.redlockd.engine;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The rounds of one Acquire of a permit. The first tries a random permit, so that callers
 * arriving together spread over the N permits; a refused round's replies say which permits each
 * node holds, and the next round tries the one free on the most voting nodes, at once when that
 * is a quorum (it may well be granted), else after the retry delay or a release's wake-up. When
 * the token already holds a permit (a retry of a granted Acquire), the next round goes to that
 * permit: the same permit comes back, refreshed, and no second one is taken.
 */
final class PermitRounds implements LeaseRounds {
  /**
   * Rounds in a row that may go at once; then the retry delay. Nodes that disagree (a release
   * seen by some only) could otherwise send a call round and round without pause.
   */
  static final int AT_ONCE_IN_A_ROW = 3;

  private final Redlock redlock;
  private final Random random;
  private final String resource;
  private final int permits;
  private final String token;
  private final String owner;
  private final Duration ttl;
  private int permit; // guarded by this
  private int atOnce; // guarded by this

  PermitRounds(Redlock redlock, Random random, String resource, int permits, String token, String owner,
      Duration ttl) {
    this.redlock = redlock;
    this.random = random;
    this.resource = resource;
    this.permits = permits;
    this.token = token;
    this.owner = owner;
    this.ttl = ttl;
    this.permit = 1 + random.nextInt(permits);
  }

  @Override
  public String resource() {
    return resource;
  }

  @Override
  public CompletableFuture<Grant> next(Consumer<List<String>> answered) {
    int trying;
    synchronized (this) {
      trying = permit;
    }
    return redlock.acquirePermit(resource, permits, trying, token, owner, ttl, answered);
  }

  @Override
  public void giveBack(Grant lease, Redlock unused) {
    redlock.release(resource, lease.permit(), token, redlock.newNotice());
  }

  @Override
  public synchronized boolean retryAtOnce(Throwable refusal) {
    if (!(refusal instanceof PermitsHeldException held)) {
      atOnce = 0;
      return false;
    }
    int quorum = redlock.quorum();
    boolean promising;
    // A token that holds a permit gets it back: a quorum holding it for this token answers
    // with it. One that is free of other tokens on fewer than a quorum cannot be got back (it
    // is a stale write of a failed round, say, on a few nodes): the call looks elsewhere.
    if (held.mine() != 0 && held.freeOn(held.mine()) >= quorum) {
      permit = held.mine();
      promising = true;
    } else {
      permit = mostFree(held);
      promising = held.freeOn(permit) >= quorum;
    }
    if (promising && atOnce < AT_ONCE_IN_A_ROW) {
      atOnce++;
      return true;
    }
    atOnce = 0;
    return false;
  }

  /** The permit free on the most voting nodes; among equals, one at random (callers spread out). */
  private int mostFree(PermitsHeldException held) {
    int best = 0;
    int ties = 0;
    for (int k = 1; k <= held.permits(); k++) {
      int free = held.freeOn(k);
      if (best == 0 || free > held.freeOn(best)) {
        best = k;
        ties = 1;
      } else if (free == held.freeOn(best) && random.nextInt(++ties) == 0) {
        best = k;
      }
    }
    return best;
  }
}
