package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link LockClient#lead}: the work runs while leading, is interrupted the moment the
 * leadership is lost, and is resigned for when it returns; requeue leads again after a loss.
 * Over an in-process server with the scripted election fake.
 */
class LeadTest {
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

  /** Runs lead on a thread of its own; the future has its result, or what it threw. */
  private <T> CompletableFuture<Object> leadInBackground(OnLoss onLoss, LeaderWork<T> work, AtomicReference<Thread> thread) {
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        outcome.complete(client.lead("jobs", CampaignOptions.value("a").ttl(Duration.ofSeconds(2)), onLoss, work));
      } catch (Throwable e) {
        outcome.complete(e);
      }
    }, "lead");
    thread.set(t);
    t.start();
    return outcome;
  }

  @Test
  void theWorkRunsWhileLeadingWithTheLeadershipAndIsResignedForWhenItReturns() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    List<Long> terms = new CopyOnWriteArrayList<>();
    CompletableFuture<Object> outcome = leadInBackground(OnLoss.FAIL, leading -> {
      terms.add(leading.term());
      assertThat(leading.isLeader()).isTrue();
      return "done";
    }, thread);
    FakeElectionService.Candidate c = candidate(0);
    c.lead(7);

    assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("done");
    assertThat(terms).containsExactly(7L);
    assertThat(c.halfClosed).as("resigned").isTrue();
  }

  @Test
  void aLossInterruptsTheWorkBeforeTheDeadlineAndLeadThrowsTheLoss() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    AtomicReference<Leadership> handed = new AtomicReference<>();
    CompletableFuture<long[]> interrupted = new CompletableFuture<>();
    List<LeaseLostException> heard = new CopyOnWriteArrayList<>();
    CompletableFuture<Object> outcome = leadInBackground(OnLoss.FAIL, leading -> {
      handed.set(leading);
      leading.onLost(heard::add);
      try {
        Thread.sleep(60_000);
      } catch (InterruptedException e) {
        interrupted.complete(new long[] {System.nanoTime(), leading.deadlineNanos()});
        throw e;
      }
      return "never";
    }, thread);
    FakeElectionService.Candidate c = candidate(0);
    c.answer(3, c.lastSequence(), "a", Duration.ofMillis(400)); // leads once, never renewed

    long[] at = interrupted.get(5, TimeUnit.SECONDS);
    assertThat(at[0]).as("the work is interrupted before the deadline itself").isLessThan(at[1]);
    Object thrown = outcome.get(5, TimeUnit.SECONDS);
    assertThat(thrown).isInstanceOf(LeaseLostException.class);
    assertThat(((LeaseLostException) thrown).status().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    await().atMost(WAIT_LONG).until(() -> !heard.isEmpty());
    assertThat(thrown).as("the loss callbacks' error").isSameAs(heard.get(0));
    assertThat(((Throwable) thrown).getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
    assertThat(handed.get().isLeader()).isFalse();
    assertThat(fake.candidates).as("no requeue").hasSize(1);
  }

  @Test
  void workThatIgnoresTheInterruptStillEndsInTheLossAndTheInterruptIsNotLeftOnTheThread() throws Exception {
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    AtomicReference<Boolean> flagAfter = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        outcome.complete(client.lead("jobs", CampaignOptions.value("a").ttl(Duration.ofSeconds(2)), leading -> {
          while (leading.isLeader()) {
            LockSupport.parkNanos(1_000_000); // returns on an interrupt without throwing or clearing it
          }
          return "returned after the loss";
        }));
      } catch (Throwable e) {
        outcome.complete(e);
      } finally {
        flagAfter.set(Thread.currentThread().isInterrupted());
      }
    }, "lead");
    t.start();
    FakeElectionService.Candidate c = candidate(0);
    c.lead(6);
    await().atMost(WAIT_LONG).until(() -> c.requests.size() >= 2);
    c.end(Status.NOT_FOUND.withDescription("taken over"));

    assertThat(outcome.get(5, TimeUnit.SECONDS)).as("a result after the loss does not count").isInstanceOf(LeaseLostException.class);
    t.join(5_000);
    assertThat(flagAfter.get()).as("the loss's interrupt was lead's own").isFalse();
  }

  @Test
  void workThatKeepsTheCallersInterruptStillGetsAResignThatWaitsForTheServer() throws Exception {
    fake.holdResigns = true;
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    AtomicReference<Boolean> flagAfter = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        outcome.complete(client.lead("jobs", CampaignOptions.value("a").ttl(Duration.ofSeconds(2)), leading -> {
          Thread.currentThread().interrupt(); // as work that caught the caller's interrupt and kept it
          return "done";
        }));
      } catch (Throwable e) {
        outcome.complete(e);
      } finally {
        flagAfter.set(Thread.currentThread().isInterrupted());
      }
    }, "lead");
    t.start();
    FakeElectionService.Candidate c = candidate(0);
    c.lead(8);
    await().atMost(WAIT_LONG).until(() -> c.halfClosed);
    Thread.sleep(200); // room for a resign cut short by the interrupt to return (and fail this test)
    assertThat(outcome).as("lead waits for the resign's answer").isNotDone();

    c.end(Status.OK);

    assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("done");
    t.join(5_000);
    assertThat(flagAfter.get()).as("the caller's interrupt is kept").isTrue();
  }

  @Test
  void withRequeueALostLeadershipIsCampaignedForAgainAndTheWorkRunAgain() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    AtomicInteger runs = new AtomicInteger();
    List<Long> terms = new CopyOnWriteArrayList<>();
    CompletableFuture<Object> outcome = leadInBackground(OnLoss.REQUEUE, leading -> {
      terms.add(leading.term());
      if (runs.incrementAndGet() == 1) {
        Thread.sleep(60_000); // interrupted by the loss
      }
      return "second round";
    }, thread);
    candidate(0).lead(3);
    await().atMost(WAIT_LONG).until(() -> runs.get() == 1);
    candidate(0).end(Status.NOT_FOUND.withDescription("taken over"));

    FakeElectionService.Candidate again = candidate(1);
    assertThat(again.requests.get(0).getResume()).as("a new candidacy, not a resume").isFalse();
    again.lead(5);
    assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("second round");
    assertThat(terms).containsExactly(3L, 5L);
    assertThat(again.halfClosed).as("resigned after the second round").isTrue();
  }

  @Test
  void workThatThrowsWhileLeadingIsResignedForAndRethrownWithoutRequeue() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    IllegalStateException boom = new IllegalStateException("boom");
    CompletableFuture<Object> outcome = leadInBackground(OnLoss.REQUEUE, leading -> {
      throw boom;
    }, thread);
    FakeElectionService.Candidate c = candidate(0);
    c.lead(4);

    assertThat(outcome.get(5, TimeUnit.SECONDS)).isSameAs(boom);
    assertThat(c.halfClosed).isTrue();
    assertThat(fake.candidates).hasSize(1);
  }

  @Test
  void interruptingTheCallerWhileCampaigningWithdrawsAndThrowsInterruptedException() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    AtomicInteger runs = new AtomicInteger();
    CompletableFuture<Object> outcome = leadInBackground(OnLoss.REQUEUE, leading -> runs.incrementAndGet(), thread);
    FakeElectionService.Candidate c = candidate(0);

    thread.get().interrupt();

    assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    await().atMost(WAIT_LONG).until(() -> c.halfClosed);
    assertThat(runs.get()).isZero();
  }

  @Test
  void interruptingTheCallerWhileWorkingReachesTheWorkAndLeadResigns() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    CountDownLatch working = new CountDownLatch(1);
    CompletableFuture<Object> outcome = leadInBackground(OnLoss.REQUEUE, leading -> {
      working.countDown();
      Thread.sleep(60_000);
      return "never";
    }, thread);
    FakeElectionService.Candidate c = candidate(0);
    c.lead(2);
    assertThat(working.await(5, TimeUnit.SECONDS)).isTrue();

    thread.get().interrupt();

    assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    assertThat(c.halfClosed).as("resigned").isTrue();
    assertThat(fake.candidates).as("not requeued: the caller cancelled").hasSize(1);
  }
}
