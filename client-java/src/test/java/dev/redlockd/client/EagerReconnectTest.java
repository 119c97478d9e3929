package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** After a kept stream lost its replica, the channel tries the replicas it finds down every 100 ms, for a while. */
class EagerReconnectTest {
  private final ManagedChannel inner = InProcessChannelBuilder.forName("eager-reconnect").build();
  private final CountingChannel channel = new CountingChannel(inner);
  private final ManualTimers timers = new ManualTimers();
  private final EagerReconnect eager = new EagerReconnect(channel, timers, timers::nanoTime);

  @AfterEach
  void close() {
    inner.shutdownNow();
  }

  @Test
  void resetsAtOnceThenEveryIntervalUntilTheWindowAfterTheLastLossEnds() {
    eager.replicaLost();
    assertThat(channel.backoffResets.get()).as("at once").isEqualTo(1);

    timers.advance(Duration.ofSeconds(1));
    long perSecond = Duration.ofSeconds(1).dividedBy(EagerReconnect.INTERVAL);
    assertThat(channel.backoffResets.get()).as("every interval").isEqualTo(1 + perSecond);

    // Another loss half way through starts the window again, without a second timer.
    timers.advance(EagerReconnect.WINDOW.dividedBy(2));
    eager.replicaLost();
    int atSecondLoss = channel.backoffResets.get();
    timers.advance(EagerReconnect.WINDOW.minus(EagerReconnect.INTERVAL));
    long inWindow = EagerReconnect.WINDOW.minus(EagerReconnect.INTERVAL).dividedBy(EagerReconnect.INTERVAL);
    assertThat(channel.backoffResets.get()).as("one timer, the window counted from the last loss")
        .isEqualTo(atSecondLoss + (int) inWindow);

    timers.advance(EagerReconnect.INTERVAL.multipliedBy(2));
    int atEnd = channel.backoffResets.get();
    timers.advance(Duration.ofMinutes(5));
    assertThat(channel.backoffResets.get()).as("none after the window").isEqualTo(atEnd);

    eager.replicaLost();
    timers.advance(EagerReconnect.INTERVAL);
    assertThat(channel.backoffResets.get()).as("a later loss starts it again").isEqualTo(atEnd + 2);
  }
}
