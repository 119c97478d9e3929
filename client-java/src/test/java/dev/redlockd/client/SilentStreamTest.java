package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.proto.v1.CampaignRequest;
import dev.redlockd.proto.v1.KeepAliveRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
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
 * open) is superseded after a quarter of the ttl: a new stream with the same first request is
 * opened at once, the silent one is still read (a late answer counts) and is cancelled, never
 * half-closed, only once its replacement has answered. A replacement is held to a third of the
 * bound until its first answer, and every reopen after a silence goes at once. No loss. A
 * candidate still waiting hears nothing and is left alone. Timed on the client's injected clock
 * and timers; gRPC in process (whose cancel the server sees as a cancel, as it sees grpc-java's
 * RST_STREAM over a real connection).
 */
class SilentStreamTest {
  private static final String R = "orders/1";
  private static final Duration TTL = Duration.ofSeconds(4);
  /** A quarter of the ttl: the requests' period, and the silence a stream is allowed. */
  private static final Duration QUARTER = TTL.dividedBy(4);
  /** The silence a stream replacing a silent one is allowed until its first answer. */
  private static final Duration THIRD = QUARTER.dividedBy(RenewalStream.REPLACEMENT_DIVISOR);
  private static final Duration NANO = Duration.ofNanos(1);

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
    Lease lease = client.acquire(R, LockOptions.ttl(TTL));
    lease.onLost(losses::add);
    timers.advance(Duration.ofMillis(1)); // so that the first answer visibly moves the deadline
    long expected = timers.nanoTime() + TTL.toNanos();
    lease.keepAlive();
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() == expected);
    return lease;
  }

  /** The first request of the {@code index}-th stream, once the server has it. */
  private KeepAliveRequest firstRequestOfStream(int index) {
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveFirsts.size() > index);
    return fake.keepAliveFirsts.get(index);
  }

  /** A kept lease whose first stream went silent a quarter of the ttl ago and was superseded. */
  private Lease supersededOnce() {
    Lease lease = keptLease();
    fake.keepAliveSilent = true;
    timers.advance(QUARTER); // the next request goes out, and is not answered
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.keepAliveLog.size() == 2);
    timers.advance(QUARTER.minus(NANO));
    assertThat(channel.calls("KeepAlive")).as("still within a quarter of the ttl").isEqualTo(1);
    timers.advance(NANO);
    assertThat(channel.calls("KeepAlive")).as("a new stream at once").isEqualTo(2);
    firstRequestOfStream(1);
    return lease;
  }

  @Test
  void aSilentStreamIsSupersededAtOnceAndCancelledOnlyOnceItsReplacementAnswers() {
    Lease lease = supersededOnce();
    KeepAliveRequest resumed = firstRequestOfStream(1);
    assertThat(resumed.getToken()).isEqualTo(firstRequestOfStream(0).getToken());
    assertThat(resumed.getResource()).isEqualTo(R);
    assertThat(resumed.getSequence()).isGreaterThan(fake.keepAliveLog.get(1).getSequence());
    assertThat(fake.streams).as("the silent stream is still open, and read").hasSize(2);
    assertThat(fake.cancelled).isEmpty();

    fake.answerKeepAliveOn(1, R, resumed.getSequence(), TTL);
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.cancelled.contains(fake.opened.get(0)));
    assertThat(fake.halfClosed).as("cancelled, never half-closed: the server released nothing").isEmpty();
    assertThat(fake.locks.get(R).token()).isEqualTo(resumed.getToken());
    assertThat(fake.streams).containsExactly(fake.opened.get(1));
    assertThat(channel.backoffResets.get()).as("reconnect backoff reset before reopening").isPositive();
    assertThat(lease.isValid()).isTrue();
    assertThat(losses).isEmpty();
  }

  @Test
  void aLateAnswerOnTheSilentStreamCounts() {
    long start = timers.nanoTime();
    Lease lease = supersededOnce();
    // keptLease advanced 1 ms before the first request; the unanswered one went out a quarter later.
    long secondSent = start + Duration.ofMillis(1).plus(QUARTER).toNanos();
    fake.answerKeepAliveOn(0, R, fake.keepAliveLog.get(1).getSequence(), TTL);

    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() == secondSent + TTL.toNanos());
    assertThat(fake.cancelled).as("a late answer cancels nothing: the replacement stays, and so does it").isEmpty();
    assertThat(fake.streams).hasSize(2);
    assertThat(losses).isEmpty();
  }

  @Test
  void aReplacementIsHeldToAThirdOfTheBoundAndEveryReopenAfterASilenceGoesAtOnce() {
    Lease lease = supersededOnce();
    for (int streams = 2; streams < 6; streams++) {
      timers.advance(THIRD.minus(NANO));
      assertThat(channel.calls("KeepAlive")).as("replacement %d within a third of the bound", streams)
          .isEqualTo(streams);
      timers.advance(NANO);
      assertThat(channel.calls("KeepAlive")).as("reopened at once, no backoff").isEqualTo(streams + 1);
      firstRequestOfStream(streams);
    }
    assertThat(fake.streams).as("every silent stream still open").hasSize(6);
    assertThat(fake.cancelled).isEmpty();

    fake.answerKeepAliveOn(5, R, fake.keepAliveFirsts.get(5).getSequence(), TTL);
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.cancelled.size() == 5);
    assertThat(fake.halfClosed).isEmpty();
    // Answered: the stream is held to the whole bound again. Its next request goes out on the
    // period (every quarter from the first stream's first request, the 4th one from now on).
    Duration untilNextRequest = QUARTER.multipliedBy(2).minus(THIRD.multipliedBy(4));
    timers.advance(untilNextRequest.plus(QUARTER).minus(NANO));
    assertThat(channel.calls("KeepAlive")).isEqualTo(6);
    timers.advance(NANO);
    assertThat(channel.calls("KeepAlive")).isEqualTo(7);
    assertThat(lease.isValid()).isTrue();
    assertThat(losses).isEmpty();
  }

  /**
   * Issue 40: a replica that answers late is slow, not silent. Once an answer took longer than a
   * third of the bound, a replacement waits twice that long (up to half the ttl) before it is
   * taken for silent; held to a third, every grant on a slow replica opened a stream every third
   * of a period, each one more renewal for the replicas, until no answer came in time.
   */
  @Test
  void aReplacementWaitsTwiceTheSlowestRecentAnswerUpToHalfTheTtl() {
    long start = timers.nanoTime();
    Lease lease = supersededOnce();
    Duration late = THIRD.dividedBy(2);
    timers.advance(late);
    // The request the silent stream left unanswered, answered a quarter and a sixth after its send.
    fake.answerKeepAliveOn(0, R, fake.keepAliveLog.get(1).getSequence(), TTL);
    long secondSent = start + Duration.ofMillis(1).plus(QUARTER).toNanos();
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.deadlineNanos() == secondSent + TTL.toNanos());

    timers.advance(THIRD.minus(late));
    assertThat(channel.calls("KeepAlive")).as("a third of the bound is not enough for this replica").isEqualTo(2);
    // Twice the slowest answer (a quarter and a sixth) is more than half the ttl: held to half the ttl.
    timers.advance(QUARTER.multipliedBy(2).minus(THIRD).minus(NANO));
    assertThat(channel.calls("KeepAlive")).isEqualTo(2);
    timers.advance(NANO);
    assertThat(channel.calls("KeepAlive")).as("then taken for silent").isEqualTo(3);
    assertThat(lease.isValid()).isTrue();
    assertThat(losses).isEmpty();
  }

  @Test
  void aStreamThatEndsAfterASilenceStillBacksOff() {
    supersededOnce();
    fake.endStreams(Status.UNAVAILABLE.withDescription("replica going away"));
    await().atMost(Duration.ofSeconds(5)).until(() -> fake.streams.isEmpty());
    // The silence and this end are two failures in a row: a backoff of 100 ms, jittered down to 50.
    timers.advance(Duration.ofMillis(50).minus(NANO));
    assertThat(channel.calls("KeepAlive")).isEqualTo(2);
    timers.advance(Duration.ofMillis(50).plus(NANO));
    assertThat(channel.calls("KeepAlive")).isEqualTo(3);
    assertThat(losses).isEmpty();
  }

  /** The first requests of the KeepAlive streams of {@code resource}, in the order they were opened. */
  private List<KeepAliveRequest> streamsOf(String resource) {
    return fake.keepAliveFirsts.stream().filter(r -> r.getResource().equals(resource)).toList();
  }

  /**
   * Issue 40: a stream that just moved (its replica shut down) has no answer of its own, and
   * hundreds moved with it to replicas busy starting, which answer each of them late. Held to a
   * quarter of its ttl, every one was replaced, and each replacement made the replicas slower
   * still. The answers the client's other grants get say how slow.
   */
  @Test
  void theBoundFollowsTheSlowAnswersOfTheClientsOtherGrants() {
    fake.keepAliveSilent = true; // every answer is the test's
    Lease slow = client.acquire("orders/slow", LockOptions.ttl(TTL));
    Lease moved = client.acquire("orders/moved", LockOptions.ttl(TTL));
    moved.onLost(losses::add);
    long sent = timers.nanoTime();
    slow.keepAlive();
    KeepAliveRequest first = firstRequestOfStream(0);
    timers.advance(QUARTER.multipliedBy(9).dividedBy(10)); // 0.9 of its bound
    // A validity of two ttls: a deadline the Acquire's could not have been.
    fake.answerKeepAliveOn(0, "orders/slow", first.getSequence(), TTL.multipliedBy(2));
    await().atMost(Duration.ofSeconds(5)).until(() -> slow.deadlineNanos() == sent + 2 * TTL.toNanos());

    moved.keepAlive();
    firstRequestOfStream(1);
    // Past its own bound, within twice the client's slowest answer (faded by half every ttl).
    timers.advance(QUARTER.multipliedBy(12).dividedBy(10));
    assertThat(channel.calls("KeepAlive")).as("within twice the client's slowest answer").isEqualTo(2);
    timers.advance(QUARTER.multipliedBy(7).dividedBy(10)); // the slowest faded to 0.65 of the bound
    await().atMost(Duration.ofSeconds(5)).until(() -> streamsOf("orders/moved").size() == 2);
    KeepAliveRequest resumed = streamsOf("orders/moved").get(1);
    fake.answerFirstKeepAlive(resumed, TTL);
    System.err.println("DBG sent=" + sent + " now=" + timers.nanoTime() + " dl=" + moved.deadlineNanos() + " seq=" + resumed.getSequence() + " ttl=" + TTL.toNanos() + " idx=" + fake.keepAliveFirsts.indexOf(resumed) + " firsts=" + fake.keepAliveFirsts.size());
    try { Thread.sleep(1000); } catch (InterruptedException e) { }
    System.err.println("DBG dl2=" + moved.deadlineNanos());
    // Past the Acquire's deadline: renewed through the replacement.
    await().atMost(Duration.ofSeconds(5)).until(() -> moved.deadlineNanos() > sent + TTL.toNanos());
    assertThat(moved.isValid()).isTrue();
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
    assertThat(fake.halfClosed).as("no stream half-closed (a release) while the lease is believed").isEmpty();
    timers.advance(NANO);
    assertThat(losses).hasSize(1);
    assertThat(lease.isValid()).isFalse();
    // The loss gives the lease back (a half-close, the holder's release) and ends every stream;
    // which stream carries the give-back is the client's choice once the lease is given up. The
    // ends are the client's own: a stream it cancelled may have been ended by the fake first
    // (NOT_FOUND, its first request read after the give-back had freed the lease).
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(channel.ends("KeepAlive"))
        .as("how the client ended each stream it opened").allMatch(end -> !end.isEmpty())
        .filteredOn(end -> end.contains("half-closed")).as("one give-back").hasSize(1));
    await().atMost(Duration.ofSeconds(5)).until(() -> !fake.halfClosed.isEmpty());
  }

  @Test
  void aCandidateStillWaitingIsLeftAloneButASilentLeaderIsSupersededAtOnce() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("scheduler", CampaignOptions.value("a").ttl(TTL));
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
    assertThat(channel.calls("Campaign")).isEqualTo(2);

    await().atMost(Duration.ofSeconds(5)).until(() -> elections.candidates.size() == 2
        && !elections.candidates.get(1).requests.isEmpty());
    FakeElectionService.Candidate resumed = elections.candidates.get(1);
    CampaignRequest first = resumed.requests.get(0);
    assertThat(first.getResume()).isTrue();
    assertThat(first.getToken()).isEqualTo(waiting.requests.get(0).getToken());
    assertThat(first.getElection()).isEqualTo("scheduler");
    assertThat(waiting.cancelled).as("superseded, not cancelled, before its replacement answers").isFalse();

    resumed.lead(7);
    await().atMost(Duration.ofSeconds(5)).until(() -> waiting.cancelled);
    assertThat(waiting.halfClosed).as("a half-close would resign").isFalse();
    assertThat(leadership.isLeader()).isTrue();
    assertThat(losses).isEmpty();
  }
}
