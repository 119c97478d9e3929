package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.client.LockClient;
import dev.redlockd.it.support.LiveServer;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The Java run-while-leader example in docs/clients.md is ReadmeLeadExample, and it runs. */
class ReadmeLeadExampleTest {
  @Test
  void theClientsPageShowsTheExampleVerbatim() throws IOException {
    ReadmeExamples.assertQuoted(ReadmeLeadExample.class, "lead-example");
  }

  @Test
  void theExampleRunsTheJobsWhileLeadingAndResigns() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      ReadmeLeadExample.Scheduler scheduler = new ReadmeLeadExample.Scheduler();

      int ran = ReadmeLeadExample.run("127.0.0.1:" + h.server.port(), scheduler);

      assertThat(ran).isEqualTo(3);
      assertThat(scheduler.ranWithTerm).hasSize(3).allMatch(term -> term > 0)
          .as("one leadership, one term").containsOnly(scheduler.ranWithTerm.get(0));
      assertThat(LockClient.create(h.channel).leader("scheduler")).as("resigned").isEmpty();
    }
  }
}
