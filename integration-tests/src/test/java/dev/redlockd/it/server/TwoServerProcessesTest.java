package dev.redlockd.it.server;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.it.support.ExclusionChecker;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.Replicas;
import dev.redlockd.testing.ServerFlags;
import dev.redlockd.testing.ServerProcess;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Two server processes on the same Redis nodes: the server is stateless, exclusion holds across replicas. */
class TwoServerProcessesTest {
  private static Replicas replicas;
  private static RedisCluster cluster;
  private static ServerProcess a;
  private static ServerProcess b;

  @BeforeAll
  static void start() {
    replicas = Replicas.start(5, 2);
    cluster = replicas.cluster();
    a = replicas.server(0);
    b = replicas.server(1);
  }

  @AfterAll
  static void stop() throws Exception {
    replicas.close();
  }

  /**
   * 32 clients on raw stubs, half through each replica, 15 grants each over 3 resources. No
   * Acquire here can be refused for load: the replicas run with admission control off
   * ({@link ServerFlags}), since a test of exclusion must not depend on how busy the machine is.
   */
  @Test
  void clientsOfTwoReplicasNeverOverlapAndFencesRiseInGrantOrder() throws Exception {
    String[] resources = {"replicas-a", "replicas-b", "replicas-c"};
    ExclusionChecker checker = new ExclusionChecker();
    AtomicInteger[] grantsByServer = {new AtomicInteger(), new AtomicInteger()};
    ExecutorService clients = Executors.newFixedThreadPool(32);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < 32; c++) {
        int server = c % 2;
        String me = "client-" + c;
        LockServiceGrpc.LockServiceBlockingStub stub =
            LockServiceGrpc.newBlockingStub((server == 0 ? a : b).channel());
        done.add(clients.submit(() -> {
          for (int i = 0; i < 15; i++) {
            String r = resources[ThreadLocalRandom.current().nextInt(resources.length)];
            Lease lease = stub.acquire(acquireRequest(r, Duration.ofSeconds(2), Duration.ofSeconds(30), ""))
                .getLease();
            checker.enter(r, me, lease.getFencingToken());
            grantsByServer[server].incrementAndGet();
            Thread.sleep(1 + ThreadLocalRandom.current().nextInt(3));
            checker.exit(r, me);
            release(stub, r, lease.getToken());
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(3, TimeUnit.MINUTES);
      }
    } finally {
      clients.shutdownNow();
    }
    assertThat(checker.overlaps.get()).isZero();
    assertThat(checker.fenceViolations.get()).isZero();
    assertThat(grantsByServer[0].get()).isEqualTo(16 * 15);
    assertThat(grantsByServer[1].get()).isEqualTo(16 * 15);
  }

  @Test
  void leaseTakenThroughOneReplicaIsReleasedThroughTheOtherAndItsWaiterGetsIt() throws Exception {
    LockServiceGrpc.LockServiceBlockingStub viaA = LockServiceGrpc.newBlockingStub(a.channel());
    LockServiceGrpc.LockServiceBlockingStub viaB = LockServiceGrpc.newBlockingStub(b.channel());
    Lease lease = viaA.acquire(acquireRequest("replicas-handoff", Duration.ofSeconds(30), Duration.ZERO, ""))
        .getLease();
    CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> viaB.acquire(
        acquireRequest("replicas-handoff", Duration.ofSeconds(30), Duration.ofSeconds(10), "")).getLease());
    Thread.sleep(300);
    assertThat(waiter).isNotDone();
    long released = System.nanoTime();
    assertThat(viaB.release(ReleaseRequest.newBuilder()
        .setResource("replicas-handoff").setToken(lease.getToken()).build()).getReleased()).isTrue();
    Lease next = waiter.get(5, TimeUnit.SECONDS);
    // A waiter on the replica that did not see the release gets it within one retry delay (100 ms).
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released)).isLessThan(1000);
    assertThat(next.getFencingToken()).isGreaterThan(lease.getFencingToken());
    viaA.release(ReleaseRequest.newBuilder().setResource("replicas-handoff").setToken(next.getToken()).build());
  }

  /**
   * Released, as a client does it: on a loaded machine two of the five nodes can miss the node
   * timeout, and a release whose outcome those nodes could change answers UNAVAILABLE; the
   * client retries with the same token (what the first try deleted then counts as not held).
   */
  private static void release(LockServiceGrpc.LockServiceBlockingStub stub, String resource, String token)
      throws InterruptedException {
    ReleaseRequest request = ReleaseRequest.newBuilder().setResource(resource).setToken(token).build();
    for (int attempt = 1; ; attempt++) {
      try {
        boolean released = stub.release(request).getReleased();
        if (attempt == 1) {
          assertThat(released).as("a release that all nodes could answer").isTrue();
        }
        return;
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || attempt == 5) {
          throw e;
        }
        Thread.sleep(20);
      }
    }
  }
}
