package dev.redlockd.it.client;

import dev.redlockd.client.CampaignOptions;
import dev.redlockd.client.Leader;
import dev.redlockd.client.Leadership;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.Observation;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The Java election example of docs/clients.md, verbatim between the markers
 * (ReadmeElectionExampleTest checks the page still says exactly this, then runs it against the
 * real server).
 */
final class ReadmeElectionExample {
  /** A stand-in for the work only the leader does, and for who routes to the leader. */
  static final class Scheduler {
    final List<Long> ranWithTerm = new CopyOnWriteArrayList<>();
    final List<String> routedTo = new CopyOnWriteArrayList<>();
    volatile boolean stopped;

    /** The leader's work; it lasts until the watcher has seen this leader (at most 5 s). */
    void runAsLeader(long term) throws InterruptedException {
      ranWithTerm.add(term);
      long until = System.nanoTime() + 5_000_000_000L;
      while (!routedTo.contains("10.0.0.7:8080") && System.nanoTime() < until) {
        Thread.sleep(5);
      }
    }

    void stop() {
      stopped = true;
    }

    void routeTo(Optional<Leader> leader) {
      routedTo.add(leader.map(Leader::value).orElse("nobody"));
    }
  }

  static Optional<Leader> run(String target, Scheduler scheduler) throws Exception {
    // README:election-example:begin
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    LockClient elections = LockClient.create(channel);

    // Anyone can watch who leads: called now, then at every change, until closed.
    try (Observation watch = elections.observe("scheduler", leader -> scheduler.routeTo(leader))) {
      // Returns once this instance leads; it keeps leading while the handle is open.
      // close() resigns, and the next candidate, on any server, leads within milliseconds.
      CampaignOptions me = CampaignOptions.value("10.0.0.7:8080").ttl(Duration.ofSeconds(10));
      try (Leadership leading = elections.campaign("scheduler", me)) {
        leading.onLost(e -> scheduler.stop()); // renewals failed: stop acting as leader now
        scheduler.runAsLeader(leading.term()); // the term is a fencing token: send it with writes
      }
    }
    Optional<Leader> now = elections.leader("scheduler"); // empty: nobody leads any more

    channel.shutdown();
    // README:election-example:end
    return now;
  }
}
