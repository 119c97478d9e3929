package dev.redlockd.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A shutdown ends many kept streams in waves (issue 40: 500 streams moved at once onto one
 * replica just restarted lost every lease), and a few at once, as it always did. The waves'
 * timers are recorded, not waited for.
 */
class OpenStreamsShutdownTest {
  private record Scheduled(long delayNanos, Runnable task) {}

  private final List<Scheduled> scheduled = new ArrayList<>();
  private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1) {
    @Override
    public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
      scheduled.add(new Scheduled(unit.toNanos(delay), task));
      return null;
    }
  };
  private final OpenStreams streams = new OpenStreams(10_000);
  private final List<Integer> ended = new ArrayList<>();

  @AfterEach
  void stop() {
    timers.shutdownNow();
  }

  private void open(int count) {
    for (int i = 0; i < count; i++) {
      int id = i;
      streams.opened(() -> {
        ended.add(id);
        return CompletableFuture.completedFuture(null);
      });
    }
  }

  @Test
  void manyStreamsEndInWavesAWaveGapApartAndEveryOneEnds() {
    open(500);
    CompletableFuture<Void> done = streams.shutdown(timers, Duration.ofSeconds(10));

    assertThat(ended).as("the first wave at once").hasSize(50);
    assertThat(scheduled).extracting(Scheduled::delayNanos).containsExactly(
        100_000_000L, 200_000_000L, 300_000_000L, 400_000_000L, 500_000_000L, 600_000_000L, 700_000_000L,
        800_000_000L, 900_000_000L);
    assertThat(done).isNotDone();
    scheduled.forEach(s -> s.task().run());
    assertThat(ended).hasSize(500).doesNotHaveDuplicates();
    assertThat(done).isDone();
  }

  @Test
  void aFewStreamsEndAtOnce() {
    open(OpenStreams.WAVE);
    CompletableFuture<Void> done = streams.shutdown(timers, Duration.ofSeconds(10));

    assertThat(ended).hasSize(OpenStreams.WAVE);
    assertThat(scheduled).isEmpty();
    assertThat(done).isDone();
  }

  @Test
  void theWavesTakeNoMoreThanHalfTheGrace() {
    open(500);
    streams.shutdown(timers, Duration.ofMillis(360));

    assertThat(scheduled.get(scheduled.size() - 1).delayNanos()).isEqualTo(180_000_000L);
  }

  @Test
  void aStreamOpenedOnceTheShutdownBeganIsEndedOnArrival() {
    open(3);
    streams.shutdown(timers, Duration.ofSeconds(10));
    List<String> late = new ArrayList<>();

    streams.opened(() -> {
      late.add("ended");
      return CompletableFuture.completedFuture(null);
    });

    assertThat(late).as("a stream the client opened before the GOAWAY reached it").containsExactly("ended");
    assertThat(ended).as("the others, once each").hasSize(3).doesNotHaveDuplicates();
  }

  @Test
  void beforeAShutdownAStreamIsOnlyRegistered() {
    List<String> calls = new ArrayList<>();
    streams.opened(() -> {
      calls.add("ended");
      return CompletableFuture.completedFuture(null);
    });

    assertThat(calls).isEmpty();
    assertThat(streams.size()).isEqualTo(1);
  }
}
