package dev.redlockd.it.polyglot;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.codeOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What every example client in examples/ must do against the real server: acquire, receive
 * HELD renewals on a KeepAlive stream, release by half-closing it, print fencing tokens and
 * never the token. Each language's test supplies the command that runs its example.
 */
abstract class ExampleClientContract {
  private static final Pattern ACQUIRED = Pattern.compile("(?m)^acquired (\\S+): fencing token (\\d+), valid for ");
  private static final Pattern HELD = Pattern.compile("(?m)^renewal: LEASE_STATE_HELD, fencing token (\\d+), ");
  private static final Pattern RELEASED =
      Pattern.compile("(?m)^released (\\S+): the KeepAlive stream ended OK after (\\d+) HELD renewals$");

  /** Skips the test (JUnit assumption) with a clear message when the runtime is missing. */
  abstract void assumeRuntime(Path root) throws InterruptedException;

  /** The command that runs the example with these options. */
  abstract List<String> command(Path root, List<String> options);

  abstract String language();

  @Test
  void acquiresKeepsAliveAndReleasesWithoutPrintingTheToken() throws Exception {
    Path root = Runtimes.repositoryRoot();
    assumeRuntime(root);
    String resource = "polyglot/" + language();
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      LockServiceGrpc.LockServiceBlockingStub java = LockServiceGrpc.newBlockingStub(server.channel());
      // ttl 6 s: renewals come every 2 s, and a lease the example failed to release would
      // still be held for seconds after it exits.
      List<String> options = List.of("--server", "127.0.0.1:" + server.port(), "--resource", resource,
          "--ttl-seconds", "6", "--hold-seconds", "3");
      String token;
      String output;
      try (ExampleProcess example = ExampleProcess.start(command(root, options), root)) {
        example.awaitLineStartingWith("acquired ", Duration.ofSeconds(30));
        token = cluster.get(0, "redlock:{" + resource + "}:lock");
        assertThat(token).as("the lock key while the example holds it").isNotBlank();

        // Really held: nobody else gets it while the example keeps it alive.
        Status other = codeOf(() -> java.acquire(acquireRequest(resource, Duration.ofSeconds(10), Duration.ZERO, "")));
        assertThat(other.getCode()).isEqualTo(Status.Code.ABORTED);

        int exit = example.waitFor(Duration.ofSeconds(60));
        output = example.output();
        assertThat(exit).as(output).isZero();
      }

      Matcher acquired = ACQUIRED.matcher(output);
      assertThat(acquired.find()).as(output).isTrue();
      assertThat(acquired.group(1)).isEqualTo(resource);
      long fencingToken = Long.parseUnsignedLong(acquired.group(2));
      List<Long> held = new ArrayList<>();
      for (Matcher m = HELD.matcher(output); m.find(); ) {
        held.add(Long.parseUnsignedLong(m.group(1)));
      }
      assertThat(held).as(output).hasSizeGreaterThanOrEqualTo(2).allMatch(f -> f >= fencingToken);
      Matcher released = RELEASED.matcher(output);
      assertThat(released.find()).as(output).isTrue();
      assertThat(Integer.parseInt(released.group(2))).isEqualTo(held.size());
      assertThat(output).doesNotContain(token);

      // Released at the half-close, not left to run out: the lock is free at once, and the
      // next grant's fencing token is higher than every one the example printed.
      Lease next = java.acquire(acquireRequest(resource, Duration.ofSeconds(10), Duration.ZERO, "")).getLease();
      assertThat(next.getFencingToken()).isGreaterThan(held.get(held.size() - 1));
    }
  }
}
