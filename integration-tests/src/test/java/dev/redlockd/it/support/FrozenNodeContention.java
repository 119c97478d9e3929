package dev.redlockd.it.support;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static dev.redlockd.it.support.LiveServer.proto;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.ExtendRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Contending clients through a real server, one Redis node SIGSTOPped once a quarter of the
 * sections have run: each client takes a random resource (waiting, and again after
 * UNAVAILABLE), enters the checker's section, extends once, leaves and releases. The caller
 * asserts on what the checker and the counts say.
 */
public final class FrozenNodeContention {
  private final StartedServer server;
  private final String[] resources;
  private final Duration ttl;
  public final ExclusionChecker checker = new ExclusionChecker();
  public final AtomicInteger renewed = new AtomicInteger();
  public final AtomicInteger renewedWhileFrozen = new AtomicInteger();
  public final AtomicInteger renewalsRefused = new AtomicInteger();
  public final AtomicInteger acquiresAgain = new AtomicInteger();
  public final AtomicInteger releasesUnknown = new AtomicInteger();
  public final AtomicBoolean frozen = new AtomicBoolean();

  public FrozenNodeContention(StartedServer server, Duration ttl, String... resources) {
    this.server = server;
    this.ttl = ttl;
    this.resources = resources;
  }

  /** Runs {@code clients} clients of {@code grants} sections each, node {@code frozenNode} frozen a quarter in. */
  public void run(int clients, int grants, int frozenNode) throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      channels.add(server.newChannel());
    }
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    int freezeAfter = clients * grants / 4;
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int c = 0; c < clients; c++) {
        String me = "client-" + c;
        LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channels.get(c % 4));
        results.add(pool.submit(() -> {
          int granted = 0;
          for (int i = 0; i < grants; i++) {
            String r = resources[ThreadLocalRandom.current().nextInt(resources.length)];
            Lease lease = acquire(stub, r);
            checker.enter(r, me, lease.getFencingToken());
            if (checker.sections.get() >= freezeAfter && frozen.compareAndSet(false, true)) {
              server.cluster().pause(frozenNode); // SIGSTOP: holds its sockets, answers nothing
            }
            try {
              stub.extend(ExtendRequest.newBuilder().setResource(r).setToken(lease.getToken())
                  .setTtl(proto(ttl)).build());
              renewed.incrementAndGet();
              if (frozen.get()) {
                renewedWhileFrozen.incrementAndGet();
              }
              Thread.sleep(1 + ThreadLocalRandom.current().nextInt(3));
            } catch (StatusRuntimeException e) {
              // A renewal may miss the quorum (a node timeout on a loaded machine); the holder
              // then stops relying on the lease at once, as a client must.
              renewalsRefused.incrementAndGet();
            }
            checker.exit(r, me);
            release(stub, r, lease);
            granted++;
          }
          return granted;
        }));
      }
      for (Future<Integer> f : results) {
        assertThat(f.get(3, TimeUnit.MINUTES)).isEqualTo(grants);
      }
    } finally {
      server.cluster().resumeAll();
      pool.shutdownNow();
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  /**
   * Acquires with a wait, again after UNAVAILABLE (a round that missed the quorum, which a node
   * timeout on a loaded machine can cause; the server took back what it wrote), as the clients
   * do, for up to a minute.
   */
  private Lease acquire(LockServiceGrpc.LockServiceBlockingStub stub, String resource) {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (true) {
      try {
        return stub.acquire(acquireRequest(resource, ttl, Duration.ofSeconds(30), "")).getLease();
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) {
          throw e;
        }
        acquiresAgain.incrementAndGet();
      }
    }
  }

  /**
   * Releases after the section. UNAVAILABLE is an answer here: a lease written on exactly a
   * quorum that includes the frozen node cannot be confirmed released by a quorum, and runs out
   * at its ttl there.
   */
  private void release(LockServiceGrpc.LockServiceBlockingStub stub, String resource, Lease lease) {
    try {
      stub.release(ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build());
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
        throw e;
      }
      releasesUnknown.incrementAndGet();
    }
  }
}
