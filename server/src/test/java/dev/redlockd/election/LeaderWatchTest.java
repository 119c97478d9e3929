package dev.redlockd.election;

import static dev.redlockd.election.FakeElectionSpace.held;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.engine.LockDescription;
import dev.redlockd.engine.QuorumUnavailableException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One watch driven answer by answer: a fake election space gives every read's answer and every
 * announcement, a manual scheduler runs the periodic reads and the deliveries to observers. No
 * nodes, no sleeps.
 */
class LeaderWatchTest {
  private static final long SECOND = LeaderWatch.CHECK_INTERVAL.toNanos();
  /** 2^63 - 1: the last term a signed comparison still orders right. */
  private static final long SIGNED_MAX = Long.MAX_VALUE;
  /** 2^63, which comes after it. */
  private static final long PAST_SIGNED_MAX = Long.MIN_VALUE;

  private FakeElectionSpace space;
  private ManualScheduler scheduler;
  private ManualScheduler delivery;
  private LeaderWatch watch;
  private Seen seen;

  /** What one observer was told, in order. */
  static final class Seen implements Consumer<Optional<Leader>> {
    final List<Optional<Leader>> states = new ArrayList<>();
    final List<Thread> threads = new ArrayList<>();

    @Override
    public void accept(Optional<Leader> state) {
      states.add(state);
      threads.add(Thread.currentThread());
    }

    Optional<Leader> last() {
      return states.get(states.size() - 1);
    }
  }

  @BeforeEach
  void start() {
    space = new FakeElectionSpace();
    scheduler = new ManualScheduler();
    delivery = new ManualScheduler();
    watch = new LeaderWatch(space, "e", scheduler, delivery);
    watch.start();
    seen = new Seen();
    watch.add(seen);
    scheduler.runDue(); // the first read is sent at once
  }

  private void announce(String payload) {
    space.changes.changed(payload);
  }

  /** Answers the read under way. */
  private void read(LockDescription found) {
    space.describes.remove().complete(found);
  }

  private void readFails() {
    space.describes.remove().completeExceptionally(new QuorumUnavailableException("2 of 5 nodes answered"));
  }

  /** The next periodic read is sent. */
  private void nextCheck() {
    scheduler.advance(SECOND);
  }

  private static Optional<Leader> leading(String value, long term) {
    return Optional.of(new Leader(value, term));
  }

  @Test
  void theFirstReadIsToldToObserversOnTheDeliveryExecutorOnly() {
    read(held("a", 5));
    assertThat(seen.states).as("nothing on the thread that completed the read").isEmpty();
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5));
  }

  @Test
  void anAnnouncementIsNotDeliveredOnThePubSubThread() {
    read(held("a", 5));
    delivery.runDue();
    announce("L 6 0 b");
    assertThat(seen.states).as("nothing told while the announcement is being handled").hasSize(1);
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5), leading("b", 6));
  }

  @Test
  void announcementsApplyInTermAndSeqOrderAndCopiesAreIgnored() {
    read(held("a", 5));
    announce("L 5 1 a2");
    announce("L 5 1 a2"); // the same from another node
    announce("L 5 0 a"); // older, late
    announce("L 4 9 old"); // an older term
    delivery.runDue();
    announce("V 5");
    delivery.runDue();
    announce("L 6 0 b");
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a2", 5), Optional.empty(), leading("b", 6));
  }

  @Test
  void aProclaimWhoseAnnouncementWasLostIsTakenFromTheNextReadAtTheSameTerm() {
    read(held("a", 5));
    announce("L 5 0 a");
    delivery.runDue();
    // The leader proclaims "b" and then "c"; both announcements are lost on this replica.
    nextCheck();
    read(held("c", 5));
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5), leading("c", 5));
    // Later announcements of the term still count.
    announce("L 5 3 d");
    delivery.runDue();
    assertThat(seen.last()).isEqualTo(leading("d", 5));
  }

  @Test
  void aReadThatBeganBeforeAnAnnouncementIsDropped() {
    read(held("a", 5));
    delivery.runDue();
    nextCheck(); // a read goes out...
    announce("L 5 1 b"); // ...and an announcement comes before its answer
    read(held("a", 5)); // what the nodes held when it was read: older
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5), leading("b", 5));
  }

  @Test
  void aReadOfAnOlderTermChangesNothing() {
    announce("L 7 0 b");
    read(held("a", 6)); // began before, answered after: dropped
    nextCheck();
    read(held("a", 6)); // an older term than announced (a late node, say): ignored
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("b", 7));
  }

  @Test
  void termsPastTwoToThe63ComeAfterLowerOnesInAnnouncementsAndReads() {
    read(held("a", SIGNED_MAX));
    announce("L " + Long.toUnsignedString(PAST_SIGNED_MAX) + " 0 b");
    delivery.runDue();
    announce("L " + Long.toUnsignedString(SIGNED_MAX) + " 5 late"); // an older term, whatever its seq
    nextCheck();
    read(held("c", PAST_SIGNED_MAX + 1));
    delivery.runDue();
    nextCheck();
    read(held("old", SIGNED_MAX));
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("b", PAST_SIGNED_MAX), leading("c", PAST_SIGNED_MAX + 1));
  }

  @Test
  void aReadThatFindsNoLeaderEndsTheTermAndItsLateAnnouncementsWithIt() {
    read(held("a", 5));
    delivery.runDue();
    nextCheck();
    read(LockDescription.NOT_HELD);
    announce("L 5 2 late"); // a proclaim of the term that ended, heard late
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5), Optional.empty());
  }

  @Test
  void oneReadWithoutAQuorumKeepsTheLeaderTwoInARowReportNone() {
    read(held("a", 5));
    nextCheck();
    readFails();
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5));
    nextCheck();
    readFails();
    delivery.runDue();
    assertThat(seen.last()).isEmpty();
    nextCheck();
    read(held("a", 5)); // confirmed again
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5), Optional.empty(), leading("a", 5));
  }

  @Test
  void aNewSubscriptionOnANodeReadsAtOnce() {
    read(held("a", 5));
    space.changes.subscribed();
    assertThat(space.describes).hasSize(1);
  }

  @Test
  void anObserverThatFallsBehindIsToldTheLatestStateAndNoneInBetween() {
    read(held("a", 5));
    delivery.runDue();
    announce("L 5 1 b");
    announce("L 5 2 c");
    announce("V 5");
    announce("L 6 0 d");
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5), leading("d", 6));
  }

  @Test
  void aLaterObserverHearsTheCurrentStateFirstAndNoRepeats() {
    read(held("a", 5));
    delivery.runDue();
    Seen later = new Seen();
    watch.add(later);
    announce("L 5 1 b");
    delivery.runDue();
    assertThat(later.states).containsExactly(leading("b", 5));
    assertThat(seen.states).containsExactly(leading("a", 5), leading("b", 5));
  }

  @Test
  void anObserverThatThrowsDoesNotStopTheOthers() {
    Consumer<Optional<Leader>> broken = state -> {
      throw new IllegalStateException("broken observer");
    };
    watch.add(broken);
    Seen after = new Seen();
    watch.add(after);
    read(held("a", 5));
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5));
    assertThat(after.states).containsExactly(leading("a", 5));
  }

  @Test
  void aRemovedObserverIsToldNothingMoreAndTheLastStopsTheWatch() {
    read(held("a", 5));
    announce("L 6 0 b"); // pending for the observer when it leaves
    assertThat(watch.remove(seen)).as("the last observer").isTrue();
    delivery.runDue();
    assertThat(seen.states).isEmpty();
    assertThat(space.listening).isFalse();
    scheduler.advance(5 * SECOND);
    assertThat(space.describes).as("no more reads").isEmpty();
  }

  @Test
  void anObserverThatRemovesItselfWhileBeingToldDoesNotBlockTheWatch() {
    Consumer<Optional<Leader>> leaving = new Consumer<>() {
      @Override
      public void accept(Optional<Leader> state) {
        watch.remove(this);
      }
    };
    watch.add(leaving);
    read(held("a", 5));
    delivery.runDue();
    announce("L 6 0 b");
    delivery.runDue();
    assertThat(seen.states).containsExactly(leading("a", 5), leading("b", 6));
  }
}
