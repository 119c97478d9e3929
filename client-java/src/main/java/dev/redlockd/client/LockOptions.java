package dev.redlockd.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How to take a lock or a permit: the lease's ttl, how long to wait while others hold it, the
 * owner operators see, whether to keep it alive. Immutable; each method returns a changed copy.
 *
 * <pre>{@code
 * locks.acquire("orders/42", LockOptions.ttl(Duration.ofSeconds(30)).waitUpTo(Duration.ofSeconds(2)));
 * }</pre>
 *
 * <p>Why a value rather than parameters: a ttl and a wait are both {@link Duration}s, and
 * {@code acquire(resource, ttl, wait)} compiles just as well with the two swapped. Here each
 * Duration is named where it is given, and means the same in every method that takes it.
 */
public final class LockOptions {
  private final Duration ttl; // null: the client's default ttl
  private final Duration wait;
  private final String owner; // null: the client's owner
  private final boolean keepAlive;

  private LockOptions(Duration ttl, Duration wait, String owner, boolean keepAlive) {
    this.ttl = ttl;
    this.wait = wait;
    this.owner = owner;
    this.keepAlive = keepAlive;
  }

  /** A lease of this ttl (how long the nodes keep it without a renewal); one attempt, no wait. */
  public static LockOptions ttl(Duration ttl) {
    return new LockOptions(Objects.requireNonNull(ttl, "ttl"), Duration.ZERO, null, false);
  }

  /** A lease of the client's default ttl ({@link LockClient.Builder#defaultTtl}); one attempt, no wait. */
  public static LockOptions defaultTtl() {
    return new LockOptions(null, Duration.ZERO, null, false);
  }

  /** Waits up to {@code wait} while others hold it (zero, the default: one attempt). */
  public LockOptions waitUpTo(Duration wait) {
    return new LockOptions(ttl, Objects.requireNonNull(wait, "wait"), owner, keepAlive);
  }

  /** The owner operators see for this lease, instead of the client's ({@link LockClient.Builder#owner}). */
  public LockOptions owner(String owner) {
    return new LockOptions(ttl, wait, Objects.requireNonNull(owner, "owner"), keepAlive);
  }

  /** The lease comes back kept alive ({@link Lease#keepAlive()}): renewed until released or lost. */
  public LockOptions keepAlive() {
    return new LockOptions(ttl, wait, owner, true);
  }

  Duration ttlOr(Duration clientDefault) {
    return ttl != null ? ttl : clientDefault;
  }

  Duration waitTime() {
    return wait;
  }

  String ownerOr(String clientOwner) {
    return owner != null ? owner : clientOwner;
  }

  boolean keptAlive() {
    return keepAlive;
  }

  @Override
  public String toString() {
    return "LockOptions[ttl=" + (ttl != null ? ttl : "client default") + ", wait=" + wait
        + (owner != null ? ", owner=" + owner : "") + (keepAlive ? ", keepAlive" : "") + "]";
  }
}
