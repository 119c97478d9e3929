package dev.redlockd.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How to campaign in an election: the value to lead with, the leadership's ttl, how long to wait
 * for the lead. Immutable; each method returns a changed copy.
 *
 * <pre>{@code
 * elections.campaign("scheduler", CampaignOptions.value("10.0.0.7:8080").ttl(Duration.ofSeconds(10)));
 * }</pre>
 *
 * <p>Why a value rather than parameters: the election's name and the value are both Strings,
 * and {@code campaign(election, value, ttl)} compiles just as well with the two swapped.
 */
public final class CampaignOptions {
  private final String value;
  private final Duration ttl; // null: the client's default ttl
  private final Duration wait; // null: as long as it takes

  private CampaignOptions(String value, Duration ttl, Duration wait) {
    this.value = value;
    this.ttl = ttl;
    this.wait = wait;
  }

  /**
   * Campaigns with this value (what {@link LockClient#leader} and {@link LockClient#observe}
   * report while this caller leads), the client's default ttl, waiting as long as it takes.
   */
  public static CampaignOptions value(String value) {
    return new CampaignOptions(Objects.requireNonNull(value, "value"), null, null);
  }

  /** The leadership's ttl: how long the nodes keep it without a renewal. */
  public CampaignOptions ttl(Duration ttl) {
    return new CampaignOptions(value, Objects.requireNonNull(ttl, "ttl"), wait);
  }

  /** Gives up after {@code wait} with {@link LockNotAcquiredException} (default: as long as it takes). */
  public CampaignOptions waitUpTo(Duration wait) {
    return new CampaignOptions(value, ttl, Objects.requireNonNull(wait, "wait"));
  }

  String leaderValue() {
    return value;
  }

  Duration ttlOr(Duration clientDefault) {
    return ttl != null ? ttl : clientDefault;
  }

  /** Null: as long as it takes. */
  Duration waitOrNull() {
    return wait;
  }

  @Override
  public String toString() {
    return "CampaignOptions[value=" + value + ", ttl=" + (ttl != null ? ttl : "client default")
        + ", wait=" + (wait != null ? wait : "as long as it takes") + "]";
  }
}
