package dev.redlockd.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The periodic look at every open stream (a waiting candidate whose client is gone is withdrawn
 * there) goes on after one stream's look fails, and stops with the shutdown.
 */
class OpenStreamsSweepTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final OpenStreams streams = new OpenStreams(100);

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private static final class Looked implements OpenStreams.OpenStream {
    final AtomicInteger looks = new AtomicInteger();
    private final boolean fails;

    Looked(boolean fails) {
      this.fails = fails;
    }

    @Override
    public CompletableFuture<Void> shutdown() {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public void sweep() {
      looks.incrementAndGet();
      if (fails) {
        throw new IllegalStateException("this stream's look fails");
      }
    }
  }

  @Test
  void everyStreamIsLookedAtEachTimeAfterOneFailsAndNoMoreOnceShutDown() throws Exception {
    Looked failing = new Looked(true);
    Looked fine = new Looked(false);
    streams.opened(failing);
    streams.opened(fine);

    streams.sweepEvery(scheduler, Duration.ofMillis(10));
    long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while ((failing.looks.get() < 3 || fine.looks.get() < 3) && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(failing.looks.get()).isGreaterThanOrEqualTo(3);
    assertThat(fine.looks.get()).isGreaterThanOrEqualTo(3);

    streams.shutdown();
    scheduler.submit(() -> { }).get(); // a look under way when the shutdown came has ended
    int after = fine.looks.get();
    Thread.sleep(100);
    assertThat(fine.looks.get()).as("looks after the shutdown").isEqualTo(after);
  }
}
