package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.LiveServer;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Java election example in docs/clients.md is ReadmeElectionExample, and it runs. */
class ReadmeElectionExampleTest {
  @Test
  void theClientsPageShowsTheExampleVerbatim() throws IOException {
    ReadmeExamples.assertQuoted(ReadmeElectionExample.class, "election-example");
  }

  @Test
  void theExampleRunsAgainstTheRealServer() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      ReadmeElectionExample.Scheduler scheduler = new ReadmeElectionExample.Scheduler();

      var after = ReadmeElectionExample.run("127.0.0.1:" + h.server.port(), scheduler);

      assertThat(scheduler.ranWithTerm).hasSize(1);
      assertThat(scheduler.ranWithTerm.get(0)).isPositive();
      assertThat(scheduler.stopped).as("resigned, not lost").isFalse();
      // The watcher's first state is read from the nodes when its stream opens, which may be
      // before or after this candidate leads: then it sees "nobody" first, or not.
      // The resign's vacancy may reach it before it closes, or not.
      String me = "10.0.0.7:8080";
      assertThat(List.of(List.of(me), List.of("nobody", me), List.of(me, "nobody"), List.of("nobody", me, "nobody")))
          .as("what the watcher saw").contains(List.copyOf(scheduler.routedTo));
      assertThat(after).isEmpty();
    }
  }
}
