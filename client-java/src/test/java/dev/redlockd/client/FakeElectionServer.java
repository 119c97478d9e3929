package dev.redlockd.client;

import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The election tests' fixture: the scripted {@link FakeElectionService} on an in-process server,
 * and a client over it with short timeouts and quick retries.
 */
final class FakeElectionServer implements AutoCloseable {
  private static final Duration WAIT_LONG = Duration.ofSeconds(5);

  final FakeElectionService fake = new FakeElectionService();
  final LockClient client;
  private final Server server;
  private final ManagedChannel channel;

  private FakeElectionServer(ManualTimers timers) throws IOException {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(fake).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    LockClient.Builder builder = LockClient.builder(channel)
        .callTimeout(Duration.ofSeconds(2))
        .retryPolicy(RetryPolicy.defaults()
                .withMaxAttempts(3).withInitialBackoff(Duration.ofMillis(10)).withMaxBackoff(Duration.ofMillis(40)));
    if (timers != null) {
      builder.nanoClock(timers::nanoTime).scheduler(timers);
    }
    client = builder.build();
  }

  static FakeElectionServer start() throws IOException {
    return new FakeElectionServer(null);
  }

  /** The same, with the client's clock and timers moved by the test. */
  static FakeElectionServer start(ManualTimers timers) throws IOException {
    return new FakeElectionServer(timers);
  }

  /** The index-th candidate to open a Campaign stream, once its first request has come. */
  FakeElectionService.Candidate candidate(int index) {
    await().atMost(WAIT_LONG).until(() -> fake.candidates.size() > index && !fake.candidates.get(index).requests.isEmpty());
    return fake.candidates.get(index);
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}
