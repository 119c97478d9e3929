package dev.redlockd.it.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.client.ReadmeExamples;
import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.DescribeRequest;
import dev.redlockd.proto.v1.DescribeResponse;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The ShedLock example in docs/clients.md is ReadmeShedLockExample, and it runs. */
class ReadmeShedLockExampleTest {
  @Test
  void theClientsPageShowsTheExampleVerbatim() throws IOException {
    ReadmeExamples.assertQuoted(ReadmeShedLockExample.class, "shedlock-example");
  }

  @Test
  void theExampleRunsAgainstTheRealServer() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      ReadmeShedLockExample.Reports reports = new ReadmeShedLockExample.Reports();

      ReadmeShedLockExample.run("127.0.0.1:" + h.server.port(), reports);

      assertThat(reports.builtWithToken).as("runs, each with its fencing token").hasSize(1);
      DescribeResponse lock = h.blocking.describe(DescribeRequest.newBuilder().setResource("shedlock/nightly-report").build());
      assertThat(lock.getHeld()).as("held on for lockAtLeastFor after the job").isTrue();
      assertThat(lock.getFencingToken()).isEqualTo(reports.builtWithToken.get(0));
      assertThat(LiveServer.fromProto(lock.getRemainingTtl())).as("shortened to what is left of lockAtLeastFor")
          .isLessThanOrEqualTo(Duration.ofSeconds(32));
    }
  }
}
