package dev.redlockd.it.client;

import dev.redlockd.client.Leader;
import dev.redlockd.client.LeaderUpdates;
import dev.redlockd.client.LockClient;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The Java example of observation as a stream in docs/clients.md, verbatim between the markers
 * (ReadmeLeaderUpdatesExampleTest checks the page still says exactly this, then runs it against
 * the real server).
 */
final class ReadmeLeaderUpdatesExample {
  /** A stand-in for who routes to the leader: it wants updates until a leader came and went. */
  static final class Router {
    final List<String> routedTo = new CopyOnWriteArrayList<>();

    void routeTo(Optional<Leader> leader) {
      routedTo.add(leader.map(Leader::value).orElse("nobody"));
    }

    boolean wantsUpdates() {
      int led = routedTo.indexOf("10.0.0.7:8080");
      return led < 0 || !routedTo.subList(led, routedTo.size()).contains("nobody");
    }
  }

  static void run(String target, Router router) throws Exception {
    // README:leader-updates-example:begin
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    LockClient elections = LockClient.create(channel);

    // The leader as a stream: next() returns the leader now (or empty), then each change in
    // term order, blocking until it comes (next(timeout) throws TimeoutException instead).
    try (LeaderUpdates updates = elections.observe("scheduler")) {
      while (router.wantsUpdates()) {
        router.routeTo(updates.next(Duration.ofMinutes(1)));
      }
    } // close() ends it: a reader blocked in next() on another thread gets a CancellationException

    channel.shutdown();
    // README:leader-updates-example:end
  }
}
