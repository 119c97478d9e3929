package dev.redlockd.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.it.support.LiveServer;
import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.AcquireResponse;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Four times more waiting Acquire calls than --max-waiting-acquires allows: the excess gets
 * RESOURCE_EXHAUSTED at once, the rest wait; the server stays healthy; and when the waiters
 * go away (their callers cancel), their places are free again and none of them left a lease.
 */
class WaitingAcquiresOverloadTest {
  private static final int LIMIT = 50;
  private static final int CALLS = 4 * LIMIT;
  private static final com.google.protobuf.Duration TTL = LiveServer.proto(Duration.ofSeconds(30));

  @Test
  void callsPastTheLimitAreResourceExhaustedAndTheLimitIsFreedWhenWaitersLeave() throws Exception {
    try (LiveServer h = new LiveServer(3, "--max-waiting-acquires", Integer.toString(LIMIT))) {
      Lease holder = h.acquire("overload", Duration.ofSeconds(30));
      Context.CancellableContext callers = Context.current().withCancellation();
      List<CompletableFuture<Status>> calls = new ArrayList<>();
      callers.run(() -> {
        for (int i = 0; i < CALLS; i++) {
          calls.add(waitFor(h, "overload", Duration.ofSeconds(60)));
        }
      });

      await().atMost(Duration.ofSeconds(30)).until(() -> done(calls) >= CALLS - LIMIT);
      Map<Status.Code, Long> ended = codes(calls);
      assertThat(ended).as("the calls that ended").containsOnly(Map.entry(Status.Code.RESOURCE_EXHAUSTED,
          (long) (CALLS - LIMIT)));
      ServerChecks.assertServes(h.channel);
      assertThat(codeOf(waitFor(h, "overload-elsewhere", Duration.ofSeconds(1))))
          .as("another waiting Acquire while %d wait", LIMIT).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);

      callers.cancel(null); // every waiting caller goes away
      await().atMost(Duration.ofSeconds(30)).until(() -> done(calls) == CALLS);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> codeOf(waitFor(h, "overload-elsewhere", Duration.ofSeconds(1))) == Status.Code.OK);

      assertThat(h.blocking.release(ReleaseRequest.newBuilder().setResource("overload")
          .setToken(holder.getToken()).build()).getReleased()).isTrue();
      // A lease granted to a caller that had gone would block this one.
      Lease next = h.acquire("overload", Duration.ofSeconds(5));
      assertThat(next.getFencingToken()).isGreaterThan(holder.getFencingToken());
    }
  }

  private static CompletableFuture<Status> waitFor(LiveServer h, String resource, Duration wait) {
    CompletableFuture<Status> ended = new CompletableFuture<>();
    LockServiceGrpc.newStub(h.channel).withDeadlineAfter(wait.plusSeconds(30).toMillis(), TimeUnit.MILLISECONDS)
        .acquire(AcquireRequest.newBuilder().setResource(resource).setTtl(TTL).setWait(LiveServer.proto(wait))
            .build(), new StreamObserver<>() {
              @Override
              public void onNext(AcquireResponse value) {}

              @Override
              public void onError(Throwable t) {
                ended.complete(Status.fromThrowable(t));
              }

              @Override
              public void onCompleted() {
                ended.complete(Status.OK);
              }
            });
    return ended;
  }

  private static Status.Code codeOf(CompletableFuture<Status> call) throws Exception {
    return call.get(60, TimeUnit.SECONDS).getCode();
  }

  private static long done(List<CompletableFuture<Status>> calls) {
    return calls.stream().filter(CompletableFuture::isDone).count();
  }

  private static Map<Status.Code, Long> codes(List<CompletableFuture<Status>> calls) {
    return calls.stream().filter(CompletableFuture::isDone)
        .collect(Collectors.groupingBy(c -> c.join().getCode(), Collectors.counting()));
  }
}
