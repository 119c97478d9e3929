package dev.redlockd.it.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.client.CampaignOptions;
import dev.redlockd.client.Leadership;
import dev.redlockd.client.LockClient;
import dev.redlockd.it.support.LiveServer;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The Java observe-as-a-stream example in docs/clients.md is ReadmeLeaderUpdatesExample, and it runs. */
class ReadmeLeaderUpdatesExampleTest {
  @Test
  void theClientsPageShowsTheExampleVerbatim() throws IOException {
    ReadmeExamples.assertQuoted(ReadmeLeaderUpdatesExample.class, "leader-updates-example");
  }

  @Test
  void theExampleSeesALeaderComeAndGo() throws Exception {
    try (LiveServer h = new LiveServer(3)) {
      ReadmeLeaderUpdatesExample.Router router = new ReadmeLeaderUpdatesExample.Router();
      String target = "127.0.0.1:" + h.server.port();
      CompletableFuture<Void> example = CompletableFuture.runAsync(() -> {
        try {
          ReadmeLeaderUpdatesExample.run(target, router);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> !router.routedTo.isEmpty()); // the state now: nobody
      ManagedChannel channel = h.channel;
      Leadership leading = LockClient.create(channel)
          .campaign("scheduler", CampaignOptions.value("10.0.0.7:8080").ttl(Duration.ofSeconds(10)));
      await().atMost(Duration.ofSeconds(10)).until(() -> router.routedTo.size() >= 2);
      leading.resign();

      example.get(10, TimeUnit.SECONDS);
      assertThat(router.routedTo).containsExactly("nobody", "10.0.0.7:8080", "nobody");
    }
  }
}
