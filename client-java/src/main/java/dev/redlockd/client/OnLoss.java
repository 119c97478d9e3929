package dev.redlockd.client;

/** What {@link LockClient#lead(String, CampaignOptions, OnLoss, LeaderWork)} does when the leadership is lost. */
public enum OnLoss {
  /** Throw the {@link LeaseLostException} (once the work has returned). */
  FAIL,
  /** Campaign again and run the work again when leading again (Curator's autoRequeue). */
  REQUEUE
}
