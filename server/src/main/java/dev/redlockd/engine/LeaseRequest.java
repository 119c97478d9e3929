package dev.redlockd.engine;

import java.time.Duration;

/**
 * What an Acquire asks of the engine, named rather than placed: the lock on {@code resource}, or
 * a permit of the semaphore on it when {@code permits} is above 0. Three Strings and two Durations
 * in a row compile when two of them are swapped; a builder's names do not. Carries the token, so
 * it has no {@code toString} of its own.
 */
public final class LeaseRequest {
  private final String resource;
  private final int permits;
  private final Duration ttl;
  private final Duration waitUpTo;
  private final String token;
  private final String owner;
  private final String holder;
  private final Duration callerLeavesIn;

  private LeaseRequest(Builder b) {
    this.resource = b.resource;
    this.permits = b.permits;
    this.ttl = b.ttl;
    this.waitUpTo = b.waitUpTo;
    this.token = b.token;
    this.owner = b.owner;
    this.holder = b.holder;
    this.callerLeavesIn = b.callerLeavesIn;
  }

  /** The lock on {@code resource} (or, with {@link Builder#permits}, a permit of its semaphore). */
  public static Builder forResource(String resource) {
    return new Builder(resource);
  }

  public String resource() {
    return resource;
  }

  /** 0 for the lock; the semaphore's N for one of its permits. */
  public int permits() {
    return permits;
  }

  /** Null for the server's default ttl. */
  public Duration ttl() {
    return ttl;
  }

  public Duration waitUpTo() {
    return waitUpTo;
  }

  /** Empty: the engine makes one. */
  public String token() {
    return token;
  }

  public String owner() {
    return owner;
  }

  /** The caller's identity as the access policy names it; empty without a policy. */
  public String holder() {
    return holder;
  }

  /** The time left before the caller's deadline, or null without one (see {@link Leases#acquire}). */
  public Duration callerLeavesIn() {
    return callerLeavesIn;
  }

  public static final class Builder {
    private final String resource;
    private int permits;
    private Duration ttl;
    private Duration waitUpTo = Duration.ZERO;
    private String token = "";
    private String owner = "";
    private String holder = "";
    private Duration callerLeavesIn;

    private Builder(String resource) {
      this.resource = resource;
    }

    public Builder permits(int permits) {
      this.permits = permits;
      return this;
    }

    public Builder ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    public Builder waitUpTo(Duration wait) {
      this.waitUpTo = wait;
      return this;
    }

    public Builder token(String token) {
      this.token = token;
      return this;
    }

    public Builder owner(String owner) {
      this.owner = owner;
      return this;
    }

    public Builder holder(String holder) {
      this.holder = holder;
      return this;
    }

    public Builder callerLeavesIn(Duration callerLeavesIn) {
      this.callerLeavesIn = callerLeavesIn;
      return this;
    }

    public LeaseRequest build() {
      return new LeaseRequest(this);
    }
  }
}
