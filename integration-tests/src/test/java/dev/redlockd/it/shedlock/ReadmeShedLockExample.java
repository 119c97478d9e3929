package dev.redlockd.it.shedlock;

import dev.redlockd.client.LockClient;
import dev.redlockd.shedlock.RedlockdLockProvider;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;

/**
 * The ShedLock example of docs/clients.md, verbatim between the markers
 * (ReadmeShedLockExampleTest checks the page still says exactly this, then runs it against the
 * real server).
 */
final class ReadmeShedLockExample {
  /** A stand-in for a job that writes to a store which checks fencing tokens. */
  static final class Reports {
    final List<Long> builtWithToken = new CopyOnWriteArrayList<>();

    void build(long fencingToken) {
      builtWithToken.add(fencingToken);
    }
  }

  static void run(String target, Reports reports) {
    // README:shedlock-example:begin
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    LockProvider locks = new RedlockdLockProvider(LockClient.create(channel), "shedlock/");
    LockingTaskExecutor executor = new DefaultLockingTaskExecutor(locks);

    // Runs on one instance at a time, and is skipped (not queued) while another holds the lock.
    // If this instance hangs or dies, the lock frees itself after lockAtMostFor (10 min); it
    // stays taken for at least lockAtLeastFor (30 s), so that instances whose clocks disagree
    // do not each run the job once. The fencing token goes with every write the job makes.
    Runnable nightlyReport = () -> reports.build(RedlockdLockProvider.currentFencingToken());
    executor.executeWithLock(nightlyReport,
        new LockConfiguration(Instant.now(), "nightly-report", Duration.ofMinutes(10), Duration.ofSeconds(30)));
    executor.executeWithLock(nightlyReport, // skipped: lockAtLeastFor has not passed yet
        new LockConfiguration(Instant.now(), "nightly-report", Duration.ofMinutes(10), Duration.ofSeconds(30)));

    channel.shutdown();
    // README:shedlock-example:end
  }
}
