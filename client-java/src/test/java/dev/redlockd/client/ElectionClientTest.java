package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The election API over an in-process server with a scripted fake: how a campaign becomes a
 * leadership, how it is dated, lost, resigned and proclaimed, and what an observer is told.
 */
class ElectionClientTest {
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

  private FakeElectionService.Candidate candidate(int index) {
    return election.candidate(index);
  }

  @Test
  void aCandidateKeepsSendingWhileItWaitsAndLeadsOnTheFirstAnswer() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("10.0.0.7").ttl(Duration.ofMillis(400)));
    FakeElectionService.Candidate c = candidate(0);
    await().atMost(WAIT_LONG).until(() -> c.requests.size() >= 3);
    assertThat(campaign).isNotDone();
    assertThat(c.requests).extracting(r -> r.getSequence()).startsWith(1L, 2L, 3L);
    assertThat(c.requests.get(0).getElection()).isEqualTo("jobs");
    assertThat(c.requests.get(0).getValue()).isEqualTo("10.0.0.7");
    assertThat(c.requests.get(0).getTtl().getNanos()).isEqualTo(400_000_000);

    c.lead(77);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    assertThat(leading.term()).isEqualTo(77);
    assertThat(leading.value()).isEqualTo("10.0.0.7");
    assertThat(leading.isLeader()).isTrue();
    assertThat(leading.toString()).contains("jobs", "77", "10.0.0.7");
  }

  @Test
  void theLeadershipIsDatedFromTheRequestItsAnswerEchoes() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(1)));
    FakeElectionService.Candidate c = candidate(0);
    long firstSent = System.nanoTime();
    await().atMost(WAIT_LONG).until(() -> c.requests.size() >= 3); // 500 ms after the first
    c.answer(5, 999, "a", Duration.ofSeconds(1)); // a sequence never sent: cannot be dated
    Thread.sleep(50);
    assertThat(campaign).as("an answer that cannot be dated does not make a leader").isNotDone();

    c.answer(5, 1, "a", Duration.ofSeconds(1));
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    assertThat(leading.deadlineNanos()).as("request 1's send time + validity")
        .isLessThanOrEqualTo(firstSent + Duration.ofSeconds(1).toNanos());
    assertThat(leading.remaining()).isLessThan(Duration.ofMillis(550));
  }

  @Test
  void aCandidateWhoseWaitPassesWithdrawsAndIsNotAcquired() {
    LockNotAcquiredException e = catchThrowableOfType(
        () -> client.campaign("jobs",
            CampaignOptions.value("b").ttl(Duration.ofSeconds(2)).waitUpTo(Duration.ofMillis(200))),
        LockNotAcquiredException.class);
    assertThat(e.status().getCode()).isEqualTo(Status.Code.ABORTED);
    assertThat(e.getMessage()).contains("jobs");
    await().atMost(WAIT_LONG).until(() -> fake.candidates.get(0).halfClosed);
  }

  @Test
  void aCancelledCampaignWithdraws() {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("b").ttl(Duration.ofSeconds(2)));
    candidate(0);
    campaign.cancel(false);
    await().atMost(WAIT_LONG).until(() -> fake.candidates.get(0).halfClosed);
  }

  @Test
  void aStreamEndingBeforeLeadingFailsTheCampaignWithItsStatus() {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("b").ttl(Duration.ofSeconds(2)));
    candidate(0).end(Status.INVALID_ARGUMENT.withDescription("bad election"));
    LockServiceException e = catchThrowableOfType(() -> client.await(campaign), LockServiceException.class);
    assertThat(e.status().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void aLostLeadershipIsReportedOnceAndLateCallbacksRunAtOnce() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(2)));
    FakeElectionService.Candidate c = candidate(0);
    c.lead(9);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    leading.onLost(heard::add);

    c.end(Status.NOT_FOUND.withDescription("taken over"));
    await().atMost(WAIT_LONG).until(() -> !heard.isEmpty());
    Thread.sleep(100);
    assertThat(heard).hasSize(1);
    assertThat(heard.get(0).status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(leading.isLeader()).isFalse();
    List<LeaseLostException> late = new CopyOnWriteArrayList<>();
    leading.onLost(late::add);
    assertThat(late).containsExactly(heard.get(0));
    assertThat(leading.resign()).as("a lost leadership is not resigned").isFalse();
  }

  @Test
  void aLeadershipWhoseRenewalsStopIsLostBeforeItsDeadline() throws Exception {
    // On the client's clock and timers, moved here: the claim is when the client reports the
    // loss, not how late a starved machine runs a timer thread (340 ms once, beside a build).
    ManualTimers timers = new ManualTimers();
    try (FakeElectionServer timed = FakeElectionServer.start(timers)) {
      CompletableFuture<Leadership> campaign = timed.client.campaignAsync("jobs",
          CampaignOptions.value("a").ttl(Duration.ofMillis(400)));
      timers.advance(Duration.ZERO); // the campaign's first request
      FakeElectionService.Candidate c = timed.candidate(0);
      c.validity = Duration.ofMillis(300);
      c.answer(3, c.lastSequence(), "a", c.validity); // leads once, never renewed
      Leadership leading = campaign.get(5, TimeUnit.SECONDS);
      CompletableFuture<Long> lostAt = new CompletableFuture<>();
      leading.onLost(e -> lostAt.complete(timers.nanoTime()));
      timers.advance(Duration.ofMillis(400));
      assertThat(lostAt).as("reported by the time the ttl has passed").isDone();
      assertThat(lostAt.get()).as("reported before the deadline itself").isLessThan(leading.deadlineNanos());
      assertThat(leading.isLeader()).isFalse();
    }
  }

  @Test
  void resignHalfClosesOnceAndIsNoLoss() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(2)));
    FakeElectionService.Candidate c = candidate(0);
    c.lead(4);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    leading.onLost(heard::add);

    assertThat(leading.resign()).isTrue();
    assertThat(c.halfClosed).isTrue();
    assertThat(leading.resign()).isFalse();
    leading.close();
    assertThat(leading.isLeader()).isFalse();
    Thread.sleep(100);
    assertThat(heard).isEmpty();
  }

  @Test
  void proclaimReturnsOnceTheServerShowsTheNewValue() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(2)));
    FakeElectionService.Candidate c = candidate(0);
    c.lead(4);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);

    leading.proclaim("a2");
    assertThat(leading.value()).isEqualTo("a2");
    assertThat(leading.term()).isEqualTo(4);
    assertThat(c.requests.get(c.requests.size() - 1).getValue()).isEqualTo("a2");

    c.leadingTerm = 0; // the server stops answering: the proclaim times out
    LockServiceException e = catchThrowableOfType(() -> leading.proclaim("a3"), LockServiceException.class);
    assertThat(e.status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
  }

  @Test
  void theTermFollowsARenewalThatReportsAHigherOneAndNeverFalls() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(2)));
    FakeElectionService.Candidate c = candidate(0);
    c.lead(4);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    c.answer(9, c.lastSequence(), "a", Duration.ofSeconds(2));
    await().atMost(WAIT_LONG).until(() -> leading.term() == 9);
    c.answer(5, c.lastSequence(), "a", Duration.ofSeconds(2));
    leading.proclaim("a2"); // answered after the lower term: both have been applied
    assertThat(leading.term()).isEqualTo(9);
  }

  @Test
  void leaderReportsTheLeaderOrNoneAndRetriesUnavailable() {
    assertThat(client.leader("jobs")).isEmpty();
    fake.leader = new Leader("10.0.0.7", 12);
    fake.failNextLeader.add(Status.UNAVAILABLE);
    assertThat(client.leader("jobs")).contains(new Leader("10.0.0.7", 12));
    fake.failNextLeader.add(Status.INVALID_ARGUMENT);
    assertThat(catchThrowableOfType(() -> client.leader(""), LockServiceException.class).status().getCode())
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void anObserverSeesEachChangeOnceInTermOrderAcrossReopenedStreamsAndNothingAfterClose() throws Exception {
    List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
    Observation observation = client.observe("jobs", seen::add);
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
    second.onNext(FakeElectionService.state("a2", 5)); // proclaimed
    second.onNext(FakeElectionService.state(null, 0));
    second.onNext(FakeElectionService.state("b", 6));
    await().atMost(WAIT_LONG).until(() -> seen.size() == 5);

    observation.close();
    try {
      second.onNext(FakeElectionService.state(null, 0));
    } catch (io.grpc.StatusRuntimeException cancelledFirst) {
      // The close's cancel reached the server first: nothing can be sent any more.
    }
    Thread.sleep(100);
    assertThat(seen).containsExactly(Optional.empty(), Optional.of(new Leader("a", 5)), Optional.of(new Leader("a2", 5)),
        Optional.empty(), Optional.of(new Leader("b", 6)));
    assertThat(fake.observers).hasSize(2);
  }

  /** Rule 14: a leader whose stream breaks asks for its leadership back with its token, and keeps its term. */
  @Test
  void aLeaderWhoseStreamBreaksResumesWithItsTokenAndKeepsItsTerm() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(2)));
    FakeElectionService.Candidate first = candidate(0);
    String token = first.requests.get(0).getToken();
    assertThat(token).as("a client-made token, as a lease's").hasSize(32).matches("[A-Za-z0-9_-]+");
    assertThat(first.requests.get(0).getResume()).isFalse();
    first.lead(7);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    leading.onLost(heard::add);
    long deadlineBefore = leading.deadlineNanos();
    fake.termOnResume = 7;

    first.end(Status.UNAVAILABLE.withDescription("the server is shutting down"));

    FakeElectionService.Candidate second = candidate(1);
    var reopened = second.requests.get(0);
    assertThat(reopened.getToken()).isEqualTo(token);
    assertThat(reopened.getResume()).isTrue();
    assertThat(reopened.getElection()).isEqualTo("jobs");
    assertThat(reopened.getValue()).isEqualTo("a");
    assertThat(reopened.getTtl().getSeconds()).isEqualTo(2);
    assertThat(reopened.getSequence()).as("sequences keep rising across streams").isGreaterThan(first.lastSequence());
    await().atMost(WAIT_LONG).until(() -> leading.deadlineNanos() > deadlineBefore);
    await().atMost(WAIT_LONG).until(() -> second.requests.size() >= 2);
    assertThat(second.requests.get(1).getResume()).as("only the first request of a stream resumes").isFalse();
    assertThat(leading.term()).isEqualTo(7);
    assertThat(leading.isLeader()).isTrue();
    assertThat(heard).isEmpty();
    assertThat(leading.resign()).isTrue();
    assertThat(second.halfClosed).isTrue();
    assertThat(heard).isEmpty();
  }

  @Test
  void aWaitingCandidateWhoseStreamBreaksCampaignsAgainWithItsToken() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("b").ttl(Duration.ofSeconds(2)));
    FakeElectionService.Candidate first = candidate(0);

    first.end(Status.UNAVAILABLE.withDescription("the server is shutting down"));

    FakeElectionService.Candidate second = candidate(1);
    assertThat(second.requests.get(0).getToken()).isEqualTo(first.requests.get(0).getToken());
    assertThat(second.requests.get(0).getResume()).as("it was not leading").isFalse();
    assertThat(campaign).isNotDone();
    second.lead(3);
    assertThat(campaign.get(5, TimeUnit.SECONDS).term()).isEqualTo(3);
  }

  @Test
  void notFoundOnTheResumedCampaignIsALossReportedOnce() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(2)));
    FakeElectionService.Candidate first = candidate(0);
    first.lead(7);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    leading.onLost(heard::add);
    fake.refuseResume = Status.NOT_FOUND.withDescription("the leadership ran out meanwhile");

    first.end(Status.UNAVAILABLE.withDescription("the server is shutting down"));

    await().atMost(WAIT_LONG).until(() -> !heard.isEmpty());
    Thread.sleep(300);
    assertThat(heard).hasSize(1);
    assertThat(heard.get(0).status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(leading.isLeader()).isFalse();
    assertThat(fake.candidates).as("not reopened after NOT_FOUND").hasSize(2);
  }

  @Test
  void aLeadershipWhoseStreamCannotBeReopenedIsLostOnceBeforeItsDeadline() throws Exception {
    CompletableFuture<Leadership> campaign = client.campaignAsync("jobs",
        CampaignOptions.value("a").ttl(Duration.ofSeconds(1)));
    FakeElectionService.Candidate first = candidate(0);
    first.validity = Duration.ofSeconds(1);
    first.lead(7);
    Leadership leading = campaign.get(5, TimeUnit.SECONDS);
    List<Long> lostAt = new CopyOnWriteArrayList<>();
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    leading.onLost(e -> {
      lostAt.add(System.nanoTime());
      heard.add(e);
    });
    fake.refuseCampaign = Status.UNAVAILABLE.withDescription("connection refused");

    first.end(Status.UNAVAILABLE.withDescription("the server is shutting down"));
    await().atMost(WAIT_LONG).until(() -> fake.candidates.size() >= 2);
    long deadline = leading.deadlineNanos();

    await().atMost(WAIT_LONG).until(() -> !heard.isEmpty());
    Thread.sleep(300);
    assertThat(heard).hasSize(1);
    assertThat(heard.get(0).status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(leading.deadlineNanos()).isEqualTo(deadline);
    assertThat(lostAt.get(0)).isLessThan(deadline);
    assertThat(fake.candidates.size()).as("reopened with backoff until then").isGreaterThanOrEqualTo(3);
    assertThat(leading.isLeader()).isFalse();
  }
}
