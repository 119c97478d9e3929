package dev.redlockd.it.client;

import dev.redlockd.client.CampaignOptions;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.OnLoss;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The Java run-while-leader example in docs/clients.md, verbatim between the markers
 * (ReadmeLeadExampleTest checks the page still says exactly this, then runs it against the
 * real server).
 */
final class ReadmeLeadExample {
  /** A stand-in for the work only the leader does: three jobs, each written with the term. */
  static final class Scheduler {
    final List<Long> ranWithTerm = new CopyOnWriteArrayList<>();
    private int left = 3;

    boolean hasJobs() {
      return left > 0;
    }

    void runNext(long term) throws InterruptedException {
      Thread.sleep(10); // a blocking call: where the interrupt of a lost leadership lands
      ranWithTerm.add(term);
      left--;
    }
  }

  static int run(String target, Scheduler scheduler) throws Exception {
    // README:lead-example:begin
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    LockClient elections = LockClient.create(channel);

    // Campaigns, runs the work on this thread while leading, resigns when it returns, and
    // returns its result. The moment the leadership is lost this thread is interrupted; lead
    // then throws LeaseLostException, or with OnLoss.REQUEUE campaigns again and reruns it.
    CampaignOptions me = CampaignOptions.value("10.0.0.7:8080").ttl(Duration.ofSeconds(10));
    int ran = elections.lead("scheduler", me, OnLoss.REQUEUE, leading -> {
      int jobs = 0;
      while (scheduler.hasJobs() && leading.isLeader()) {
        scheduler.runNext(leading.term()); // the term is a fencing token: send it with writes
        jobs++;
      }
      return jobs;
    });

    channel.shutdown();
    // README:lead-example:end
    return ran;
  }
}
