package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link LockClient#observe(String)}: the leader as a stream its reader pulls, over the scripted fake. */
class LeaderUpdatesTest {
  private static final Duration WAIT_LONG = Duration.ofSeconds(5);

  private FakeElectionServer election;
  private FakeElectionService fake;
  private LockClient client;

  @BeforeEach
  void start() throws Exception {
    election = FakeElectionServer.start();
    fake = election.fake;
    client = election.client;
  }

  @AfterEach
  void stop() throws Exception {
    election.close();
  }

  @Test
  void theReaderGetsEveryChangeOnceInOrderAcrossReopenedStreams() throws Exception {
    try (LeaderUpdates updates = client.observe("jobs")) {
      await().atMost(WAIT_LONG).until(() -> fake.observers.size() == 1);
      var first = fake.observers.get(0);
      first.onNext(FakeElectionService.state(null, 0));
      first.onNext(FakeElectionService.state("a", 5));
      first.onNext(FakeElectionService.state("a", 5)); // a repeat is no change
      first.onError(Status.UNAVAILABLE.asRuntimeException());
      await().atMost(WAIT_LONG).until(() -> fake.observers.size() == 2);
      var second = fake.observers.get(1);
      second.onNext(FakeElectionService.state("a", 5)); // the reopened stream's current state: not news
      second.onNext(FakeElectionService.state("old", 4)); // a server behind: never reported
      second.onNext(FakeElectionService.state("b", 6));

      // Read after they all came: none was dropped for coming before the reader asked.
      assertThat(updates.next()).isEmpty();
      assertThat(updates.next()).contains(new Leader("a", 5));
      assertThat(updates.next(WAIT_LONG)).contains(new Leader("b", 6));
      assertThatThrownBy(() -> updates.next(Duration.ofMillis(50))).isInstanceOf(TimeoutException.class)
          .hasMessageContaining("jobs");
    }
  }

  @Test
  void aReaderBlockedInNextWakesWhenAChangeComes() throws Exception {
    try (LeaderUpdates updates = client.observe("jobs")) {
      CompletableFuture<Optional<Leader>> read = CompletableFuture.supplyAsync(() -> {
        try {
          return updates.next();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      await().atMost(WAIT_LONG).until(() -> fake.observers.size() == 1);
      assertThat(read).isNotDone();
      fake.observers.get(0).onNext(FakeElectionService.state("a", 2));
      assertThat(read.get(5, TimeUnit.SECONDS)).contains(new Leader("a", 2));
    }
  }

  @Test
  void closingWakesABlockedReaderWithCancellationAndEndsTheStream() throws Exception {
    LeaderUpdates updates = client.observe("jobs");
    await().atMost(WAIT_LONG).until(() -> fake.observers.size() == 1);
    var stream = fake.observers.get(0);
    stream.onNext(FakeElectionService.state("a", 2));
    CompletableFuture<Throwable> blocked = CompletableFuture.supplyAsync(() -> {
      try {
        updates.next(); // the first state
        updates.next(); // waits: no change comes
        return null;
      } catch (Throwable e) {
        return e;
      }
    });
    Thread.sleep(50); // let it block (if it has not, it finds the stream closed all the same)

    updates.close();

    assertThat(blocked.get(5, TimeUnit.SECONDS)).isInstanceOf(CancellationException.class);
    try {
      stream.onNext(FakeElectionService.state("b", 3));
    } catch (io.grpc.StatusRuntimeException cancelledFirst) {
      // The close's cancel reached the server first.
    }
    assertThatThrownBy(updates::next).isInstanceOf(CancellationException.class);
    updates.close(); // idempotent
    assertThat(fake.observers).as("not reopened after close").hasSize(1);
  }

  @Test
  void theCallbackFormStillCallsBackAndMayCloseItselfFromTheCallback() throws Exception {
    CompletableFuture<Optional<Leader>> seen = new CompletableFuture<>();
    Observation[] self = new Observation[1];
    self[0] = client.observe("jobs", state -> {
      seen.complete(state);
      self[0].close(); // closing from inside the callback does not deadlock
    });
    await().atMost(WAIT_LONG).until(() -> fake.observers.size() == 1);
    fake.observers.get(0).onNext(FakeElectionService.state("a", 2));
    assertThat(seen.get(5, TimeUnit.SECONDS)).contains(new Leader("a", 2));
  }
}
