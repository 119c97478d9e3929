package dev.redlockd.it.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import dev.redlockd.it.support.LiveServer;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Regression, found by the chaos run: a Java-client Acquire that waited longer than the
 * lease's validity before it was granted returned a lease already past its local deadline. The
 * deadline can only be counted from the send time of the waiting call, so the wait was taken
 * off the validity; with the README's own {@code withLock(..., 10 s ttl, 1 min wait, ...)}, any
 * wait over about 10 s made withLock fail with LeaseLostException before the work began. The
 * client now asks again under the same token when a grant arrives with less than half its
 * validity left (PendingAcquire), and the refreshed answer comes at once.
 */
class WaitedGrantTest {
  private static LiveServer h;
  private static ManagedChannel otherChannel;
  private static LockClient locks;
  private static LockClient holder;

  @BeforeAll
  static void start() throws Exception {
    h = new LiveServer(3);
    locks = LockClient.create(h.channel);
    otherChannel = h.newChannel();
    holder = LockClient.create(otherChannel);
  }

  @AfterAll
  static void stop() throws Exception {
    otherChannel.shutdownNow();
    h.close();
  }

  /** Holds the resource for {@code holdMs} through another client, then releases it. */
  private static CompletableFuture<Void> heldFor(String resource, long holdMs) {
    Lease held = holder.acquire(resource, LockOptions.ttl(Duration.ofSeconds(10)));
    return CompletableFuture.runAsync(() -> {
      try {
        Thread.sleep(holdMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      held.close();
    });
  }

  @Test
  void aLeaseGrantedAfterAWaitLongerThanItsTtlIsValidWhenAcquireReturns() throws Exception {
    CompletableFuture<Void> released = heldFor("waited-acquire", 1500);
    Lease lease = locks.acquire("waited-acquire",
        LockOptions.ttl(Duration.ofMillis(500)).waitUpTo(Duration.ofSeconds(5)));
    try {
      assertThat(lease.isValid())
          .as("a 500 ms lease granted after a 1.5 s wait, as soon as acquire returns").isTrue();
      assertThat(lease.remaining()).isGreaterThan(Duration.ofMillis(200));
    } finally {
      lease.close();
      released.get(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void withLockRunsItsWorkWhenTheGrantCameAfterAWaitLongerThanTheTtl() throws Exception {
    CompletableFuture<Void> released = heldFor("waited-with-lock", 1500);
    AtomicBoolean validInside = new AtomicBoolean();
    try {
      String result = locks.withLock("waited-with-lock",
          LockOptions.ttl(Duration.ofMillis(500)).waitUpTo(Duration.ofSeconds(5)), lease -> {
        validInside.set(lease.isValid());
        Thread.sleep(100);
        return "done";
      });
      assertThat(result).isEqualTo("done");
      assertThat(validInside).as("the lease handed to the work is valid").isTrue();
    } finally {
      released.get(5, TimeUnit.SECONDS);
    }
  }
}
