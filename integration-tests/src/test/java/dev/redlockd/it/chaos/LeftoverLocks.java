package dev.redlockd.it.chaos;

import dev.redlockd.proto.v1.AcquireRequest;
import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.RedisCluster;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The end state, once every client has stopped and --max-ttl has passed: no node may still
 * hold a lock key, and every resource must be acquirable at once (through each replica in
 * turn). A lock left behind would mean a lease nobody holds keeps everyone out.
 */
final class LeftoverLocks {
  /** A node restarted just before the end may still be sitting out its quarantine for a moment. */
  private static final long RECOVERY_NANOS = TimeUnit.SECONDS.toNanos(15);

  private LeftoverLocks() {}

  static List<Violation> check(RedisCluster cluster, Replicas replicas, List<String> resources, String keyPrefix) {
    List<Violation> found = new ArrayList<>();
    for (int node = 0; node < cluster.size(); node++) {
      for (String resource : resources) {
        String key = keyPrefix + "{" + resource + "}:lock";
        Object ttl = cluster.call(node, "PTTL", key);
        if (ttl instanceof Long ms && ms != -2L) {
          found.add(new Violation(Violation.Kind.LOCK_LEFT_HELD,
              "node " + node + " still holds " + resource + " (PTTL " + ms + " ms)"));
        }
      }
    }
    for (int i = 0; i < resources.size(); i++) {
      String resource = resources.get(i);
      int replica = i % replicas.size();
      found.addAll(acquireOnce(LockServiceGrpc.newBlockingStub(replicas.channel(replica)), resource, replica));
    }
    return found;
  }

  private static List<Violation> acquireOnce(LockServiceGrpc.LockServiceBlockingStub stub, String resource,
      int replica) {
    long until = System.nanoTime() + RECOVERY_NANOS;
    Status last = Status.UNKNOWN;
    while (System.nanoTime() < until) {
      try {
        Lease lease = stub.withDeadlineAfter(2, TimeUnit.SECONDS).acquire(AcquireRequest.newBuilder()
                .setResource(resource)
                .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(1))
                .build())
            .getLease();
        stub.withDeadlineAfter(2, TimeUnit.SECONDS).release(
            ReleaseRequest.newBuilder().setResource(resource).setToken(lease.getToken()).build());
        return List.of();
      } catch (StatusRuntimeException e) {
        last = e.getStatus();
        if (last.getCode() == Status.Code.ABORTED) {
          return List.of(new Violation(Violation.Kind.LOCK_LEFT_HELD, resource
              + " is still held after every client stopped: " + last.getDescription()));
        }
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return List.of(new Violation(Violation.Kind.NOT_RECOVERED, resource + " could not be acquired through replica "
        + replica + " within 15 s after the faults were healed: " + last.getCode() + " " + last.getDescription()));
  }
}
