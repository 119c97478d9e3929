package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A kept stream that stops answering (a replica frozen, or cut off with its connection left
 * open) is treated as broken after a quarter of the ttl: cancelled, never half-closed, and
 * reopened at once with the same first request (a second silence before any answer backs
 * off), without a loss. A candidate still waiting hears nothing and is left alone. Timed on the
 * client's injected clock and timers; gRPC in process.
 */
class SilentStreamTest {
  private static final String R = "orders/1";
  private static final Duration TTL = Duration.ofSeconds(4);
  /** A quarter of the ttl: the requests' period, and the silence a stream is allowed. */
  private static final Duration QUARTER = TTL.dividedBy(4);
  private static final Duration NANO = Duration.ofNanos(1);
  /**
   * Streams opened per reopen after a silence: over this one replica, each new stream reaches the
   * replica found silent again, and is moved on at once, up to twice, before one is kept.
   */
  private static final int PER_REOPEN = 1 + RenewalStream.MAX_REPICKS;

  private final FakeLockService fake = new FakeLockService();
  private final FakeElectionService elections = new FakeElectionService();
  private final ManualTimers timers = new ManualTimers();
  private final List<LeaseLostException> losses = new CopyOnWriteArrayList<>();
  private Server server;
  private ManagedChannel inProcess;
  private CountingChannel channel;
  private LockClient client;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(fake).addService(elections).build().start();
    inProcess = InProcessChannelBuilder.forName(name).build();
    channel = new CountingChannel(inProcess);
    client = LockClient.builder(channel)
        .callTimeout(Duration.ofSeconds(5))
        .nanoClock(timers::nanoTime)
        .scheduler(timers)
        .build();
    fake.validity = TTL;
  }

  @AfterEach
  void stop() throws Exception {
    inProcess.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    fake.shutdown();
  }

  /** A kept lease whose stream has answered its first request. */
  private Lease keptLease() {
    Lease lease = client.acquire(R, TTL, Duration.ZERO);
    lease.onLost(losses::add);
    timers.advance(Duration.ofMillis(1)); // so that the first answer visibly moves the deadline
    long expected = timers.nanoTime() + TTL.toNanos();
    lease.keepAlive();
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() == expected);
    return lease;
  }

  private KeepAliveRequest firstRequestOfStream(int index) {
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveFirsts.size() > index);
    return fake.keepAliveFirsts.get(index);
  }

  /** The highest sequence a stream began with so far, once a stream begun after {@code sequence} has. */
  private long streamBegunAfter(long sequence) {
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveFirsts.stream()
        .anyMatch(first -> first.getSequence() > sequence));
    return fake.keepAliveFirsts.stream().mapToLong(KeepAliveRequest::getSequence).max().orElseThrow();
  }

  @Test
  void aStreamThatStopsAnsweringIsCancelledAndReopenedAtOnceAfterAQuarterOfTheTtl() {
    Lease lease = keptLease();
    String token = firstRequestOfStream(0).getToken();
    fake.keepAliveSilent = true;

    timers.advance(QUARTER); // the next request goes out, and is not answered
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveLog.size() == 2);
    timers.advance(QUARTER.minus(NANO));
    assertThat(channel.calls("KeepAlive")).as("still within a quarter of the ttl").isEqualTo(1);
    timers.advance(NANO);
    assertThat(channel.calls("KeepAlive")).as("reopened at once").isEqualTo(1 + PER_REOPEN);

    streamBegunAfter(fake.keepAliveLog.get(1).getSequence());
    // Each new stream names the same lease, with a sequence above every earlier request's.
    assertThat(fake.keepAliveFirsts).allSatisfy(first -> {
      assertThat(first.getToken()).isEqualTo(token);
      assertThat(first.getResource()).isEqualTo(R);
    });
    assertThat(fake.keepAliveFirsts).extracting(KeepAliveRequest::getSequence).isSorted().doesNotHaveDuplicates();
    // Cancelled, not half-closed: the server released nothing, and the old stream is gone.
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.streams.size() == 1);
    assertThat(fake.locks.get(R).token()).isEqualTo(token);
    assertThat(channel.backoffResets.get()).as("reconnect backoff reset before reopening").isPositive();
    assertThat(lease.isValid()).isTrue();
    assertThat(losses).isEmpty();
  }

  @Test
  void aSecondSilenceBeforeAnyAnswerBacksOffAndAnAnswerEndsIt() {
    Lease lease = keptLease();
    fake.keepAliveSilent = true;
    timers.advance(QUARTER.multipliedBy(2)); // a request unanswered for a quarter of the ttl: reopened
    assertThat(channel.calls("KeepAlive")).isEqualTo(1 + PER_REOPEN);
    long reopenedAt = streamBegunAfter(1);

    timers.advance(QUARTER); // the reopened stream's first request is unanswered as long
    assertThat(channel.calls("KeepAlive")).as("backing off (50 to 100 ms)").isEqualTo(1 + PER_REOPEN);
    timers.advance(Duration.ofMillis(100));
    assertThat(channel.calls("KeepAlive")).isEqualTo(1 + 2 * PER_REOPEN);

    long sequence = streamBegunAfter(reopenedAt);
    fake.answerKeepAlive(R, sequence, TTL);
    long renewedUntil = timers.nanoTime() + TTL.toNanos();
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() >= renewedUntil - QUARTER.toNanos());
    assertThat(lease.isValid()).isTrue();
    assertThat(losses).isEmpty();
  }

  @Test
  void anAnswerWithinAQuarterOfTheTtlKeepsTheStream() {
    Lease lease = keptLease();
    fake.keepAliveSilent = true;
    timers.advance(QUARTER);
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveLog.size() == 2);
    long deadline = lease.deadlineNanos();
    timers.advance(QUARTER.minus(NANO));
    fake.answerKeepAlive(R, fake.keepAliveLog.get(1).getSequence(), TTL);
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() > deadline);

    timers.advance(QUARTER); // past when the silence would have been found
    assertThat(channel.calls("KeepAlive")).isEqualTo(1);
    assertThat(losses).isEmpty();
  }

  @Test
  void aSilenceIsNoLossButTheGuardedDeadlineStillIs() {
    Lease lease = keptLease();
    fake.keepAliveSilent = true;
    timers.advance(TTL.minus(Lease.guard(TTL)).minus(NANO));
    assertThat(losses).isEmpty();
    assertThat(channel.calls("KeepAlive")).as("reopened after each silence").isGreaterThan(2);
    timers.advance(NANO);
    assertThat(losses).hasSize(1);
    assertThat(lease.isValid()).isFalse();
  }

  @Test
  void aCandidateStillWaitingIsLeftAloneButASilentLeaderResumesAtOnce() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("scheduler", "a", TTL, null);
    await().atMost(Duration.ofSeconds(5)).until(() -> !elections.candidates.isEmpty());
    FakeElectionService.Candidate waiting = elections.candidates.get(0);
    timers.advance(TTL); // requests every quarter of the ttl, no answer: it is not leading
    await().atMost(Duration.ofSeconds(5)).until(() -> waiting.requests.size() == 5);
    assertThat(channel.calls("Campaign")).isEqualTo(1);

    waiting.lead(7);
    Leadership leadership = campaign.get(5, TimeUnit.SECONDS);
    leadership.onLost(losses::add);
    waiting.leadingTerm = 0; // the replica goes silent
    timers.advance(QUARTER);
    await().atMost(Duration.ofSeconds(5)).until(() -> waiting.requests.size() == 6);
    timers.advance(QUARTER);
    assertThat(channel.calls("Campaign")).isEqualTo(1 + PER_REOPEN);

    // The streams moved on at once may have been cancelled before their request got through.
    await().atMost(Duration.ofSeconds(5)).until(() -> elections.candidates.stream().skip(1)
        .anyMatch(c -> !c.requests.isEmpty()));
    CampaignRequest resumed = elections.candidates.stream().skip(1).filter(c -> !c.requests.isEmpty())
        .findFirst().orElseThrow().requests.get(0);
    assertThat(resumed.getResume()).isTrue();
    assertThat(resumed.getToken()).isEqualTo(waiting.requests.get(0).getToken());
    assertThat(resumed.getElection()).isEqualTo("scheduler");
    assertThat(leadership.isLeader()).isTrue();
    assertThat(losses).isEmpty();
  }
}
