package dev.redlockd.election;

import dev.redlockd.engine.Grant;
import dev.redlockd.engine.KeptLease;
import dev.redlockd.engine.Leases;
import dev.redlockd.engine.LockDescription;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * An election space whose every answer the test gives: each call is recorded with a future the
 * test completes, so a candidacy or a watch can be driven one answer at a time, in any order.
 */
final class FakeElectionSpace implements ElectionSpace {
  /** One call still waiting for its answer. */
  record Call<T>(String token, Duration ttl, String value, CompletableFuture<T> answer) {}

  final Deque<Call<Grant>> acquires = new ArrayDeque<>();
  final Deque<Call<Grant>> refreshes = new ArrayDeque<>();
  final Deque<CompletableFuture<LockDescription>> describes = new ArrayDeque<>();
  final List<String> releases = new ArrayList<>();
  final List<String> announced = new ArrayList<>();
  final List<Kept> kept = new ArrayList<>();
  Leases.ChangeListener changes;
  boolean listening;

  /** A kept lease as the candidacy drives it; the test reports its renewals through {@link #listener}. */
  static final class Kept implements ElectionSpace.Kept {
    final String token;
    final KeptLease.Listener listener;
    final List<Long> renewMarks = new ArrayList<>();
    boolean stopped;
    boolean released;

    Kept(String token, KeptLease.Listener listener) {
      this.token = token;
      this.listener = listener;
    }

    @Override
    public void renewNow(Duration newTtl, long mark) {
      renewMarks.add(mark);
    }

    @Override
    public void renewNowAtOnce(long mark) {
      renewMarks.add(mark);
    }

    @Override
    public void stop() {
      stopped = true;
    }

    @Override
    public CompletableFuture<Boolean> release() {
      stopped = true;
      released = true;
      return CompletableFuture.completedFuture(true);
    }
  }

  @Override
  public CompletableFuture<Grant> acquire(String election, Duration ttl, Duration wait, String token, String value) {
    Call<Grant> call = new Call<>(token, ttl, value, new CompletableFuture<>());
    acquires.add(call);
    return call.answer();
  }

  @Override
  public CompletableFuture<Grant> refresh(String election, String token, Duration ttl, String value) {
    Call<Grant> call = new Call<>(token, ttl, value, new CompletableFuture<>());
    refreshes.add(call);
    return call.answer();
  }

  @Override
  public CompletableFuture<Boolean> release(String election, String token) {
    releases.add(token);
    return CompletableFuture.completedFuture(true);
  }

  @Override
  public Kept keep(String election, String token, Duration ttl, KeptLease.Listener listener) {
    Kept lease = new Kept(token, listener);
    kept.add(lease);
    return lease;
  }

  @Override
  public CompletableFuture<LockDescription> describe(String election) {
    CompletableFuture<LockDescription> read = new CompletableFuture<>();
    describes.add(read);
    return read;
  }

  @Override
  public void announceChange(String election, String payload) {
    announced.add(payload);
  }

  @Override
  public AutoCloseable listenForChanges(String election, Leases.ChangeListener listener) {
    changes = listener;
    listening = true;
    return () -> listening = false;
  }

  /** What a read of the nodes finds when {@code value} leads at {@code term}. */
  static LockDescription held(String value, long term) {
    return new LockDescription(true, value, "", Duration.ofSeconds(1), term, List.of("n1", "n2", "n3"));
  }
}
