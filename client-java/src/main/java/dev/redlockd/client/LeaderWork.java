package dev.redlockd.client;

/**
 * Work done while leading, by {@link LockClient#lead(String, CampaignOptions, LeaderWork)}. It gets the {@link Leadership}: its term is the fencing token to send with
 * every write, and it can be asked ({@link Leadership#isLeader()}, {@link Leadership#remaining()}).
 * The thread running it is interrupted the moment the leadership is lost.
 */
@FunctionalInterface
public interface LeaderWork<T> {
  T run(Leadership leadership) throws Exception;
}
