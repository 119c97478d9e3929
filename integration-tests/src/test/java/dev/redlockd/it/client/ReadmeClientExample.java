package dev.redlockd.it.client;

// README:client-imports:begin
import dev.redlockd.client.Lease;
import dev.redlockd.client.LockClient;
import dev.redlockd.client.LockOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
// README:client-imports:end
import java.util.ArrayList;
import java.util.List;

/**
 * The Java client example of README.md and docs/clients.md, verbatim between the markers
 * (ReadmeClientExampleTest checks that both pages still say exactly this, then runs it against
 * the real server).
 */
final class ReadmeClientExample {
  /** A stand-in for the store the lock protects: it refuses writes with an old fencing token. */
  static final class Orders {
    final List<String> accepted = new ArrayList<>();
    private long highestFence;

    synchronized void write(int order, String state, long fencingToken) {
      if (fencingToken <= highestFence) {
        throw new IllegalStateException("stale holder: fencing token " + fencingToken);
      }
      highestFence = fencingToken;
      accepted.add(order + "=" + state);
    }
  }

  static String buildReport() {
    return "report";
  }

  static String run(String target, Orders orders) throws Exception {
    // README:client-example:begin
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    LockClient locks = LockClient.create(channel);

    // Hold a lease yourself: close() releases it. Send the fencing token with every write,
    // so the store can refuse a holder that was paused past its lease. The options name each
    // Duration: the lease's ttl, and how long to wait while someone else holds it.
    LockOptions orderLock = LockOptions.ttl(Duration.ofSeconds(30)).waitUpTo(Duration.ofSeconds(2));
    try (Lease lease = locks.acquire("orders/42", orderLock)) {
      orders.write(42, "paid", lease.fencingToken());
    }

    // Or let the client do it all: acquire (waiting up to a minute), keep the lease alive while
    // the work runs, release. If the lease is lost meanwhile, the work is interrupted and
    // withLock throws LeaseLostException.
    String report = locks.withLock("jobs/nightly-report",
        LockOptions.ttl(Duration.ofSeconds(10)).waitUpTo(Duration.ofMinutes(1)), () -> buildReport());

    channel.shutdown();
    // README:client-example:end
    return report;
  }
}
