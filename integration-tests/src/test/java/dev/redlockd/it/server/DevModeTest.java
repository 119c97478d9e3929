package dev.redlockd.it.server;

import static dev.redlockd.it.support.LiveServer.acquireRequest;
import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.proto.v1.Lease;
import dev.redlockd.proto.v1.LockServiceGrpc;
import dev.redlockd.proto.v1.ReleaseRequest;
import dev.redlockd.testing.ServerProcess;
import dev.redlockd.testing.UntilAvailable;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's "run it" command: dev mode on a machine without redis-server, serving this machine
 * only, and stopping its Redis nodes and exiting 0 on Ctrl-C (SIGINT).
 */
class DevModeTest {

  @Test
  void devModeStartsItsOwnRedisNodesServesThisMachineAndStopsThemOnCtrlC() throws Exception {
    // PATH without any redis-server, and the bundled binary forced: what a JDK-and-Maven-only machine has.
    Map<String, String> env = Map.of("PATH", "/nonexistent", "REDLOCKD_REDIS_EMBEDDED", "true");
    List<Integer> redisPorts = new ArrayList<>();
    try (ServerProcess server = ServerProcess.start(List.of(), List.of("--dev"), env)) {
      String log = server.log();
      assertThat(log).contains("DEV MODE").contains("bundled in the embedded-redis jar");
      // Its 3 nodes tolerate one failure: no warning about too few nodes.
      assertThat(log).doesNotContain("use 3 or more");
      // Open to every caller, so on this machine only: no other address of it reaches the port.
      assertThat(log).contains("Access control is OPEN: whoever reaches the port may lock, describe and wait on "
          + "anything; it listens on 127.0.0.1, this machine only (--bind to serve others)");
      for (InetAddress other : otherAddressesOfThisMachine()) {
        assertThat(accepts(new InetSocketAddress(other, server.port()))).as("port %d through %s", server.port(), other)
            .isFalse();
      }
      Matcher uris = Pattern.compile("redis://127\\.0\\.0\\.1:(\\d+)").matcher(log);
      while (uris.find()) {
        redisPorts.add(Integer.parseInt(uris.group(1)));
      }
      assertThat(redisPorts).hasSizeGreaterThanOrEqualTo(3);

      LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(server.channel());
      Lease lease = UntilAvailable.call(Duration.ofSeconds(10),
          () -> stub.acquire(acquireRequest("dev-mode", Duration.ofSeconds(10), Duration.ZERO, ""))).getLease();
      assertThat(lease.getFencingToken()).isPositive();
      assertThat(stub.release(ReleaseRequest.newBuilder().setResource("dev-mode").setToken(lease.getToken()).build())
          .getReleased()).isTrue();
      assertThat(HealthGrpc.newBlockingStub(server.channel()).check(HealthCheckRequest.getDefaultInstance())
          .getStatus()).isEqualTo(ServingStatus.SERVING);
      assertThat(listServices(server)).contains("redlock.v1.LockService", "grpc.health.v1.Health");
      assertThat(listServicesV1Alpha(server)).contains("redlock.v1.LockService");
      assertThat(HealthGrpc.newBlockingStub(server.channel())
          .check(HealthCheckRequest.newBuilder().setService("redlock.v1.LockService").build())
          .getStatus()).isEqualTo(ServingStatus.SERVING);

      // Ctrl-C, as a developer stops it.
      Process interrupt = new ProcessBuilder("kill", "-INT", Long.toString(server.pid())).inheritIO().start();
      assertThat(interrupt.waitFor(10, TimeUnit.SECONDS)).isTrue();
      assertThat(server.waitFor(Duration.ofSeconds(15))).as(server.log()).hasValue(0);
      assertThat(server.log().strip()).endsWith("redlockd stopped");
    }
    for (int port : redisPorts) {
      assertThat(accepts(new InetSocketAddress("127.0.0.1", port))).as("dev Redis node on port %d stopped", port)
          .isFalse();
    }
  }

  private static List<InetAddress> otherAddressesOfThisMachine() throws SocketException {
    List<InetAddress> addresses = new ArrayList<>();
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (nic.isUp()) {
        Collections.list(nic.getInetAddresses()).stream()
            .filter(a -> !a.isLoopbackAddress() && !a.isLinkLocalAddress())
            .forEach(addresses::add);
      }
    }
    return addresses;
  }

  private static List<String> listServices(ServerProcess server) throws Exception {
    CompletableFuture<List<String>> names = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(server.channel())
        .serverReflectionInfo(new StreamObserver<>() {
          @Override
          public void onNext(ServerReflectionResponse response) {
            names.complete(response.getListServicesResponse().getServiceList().stream()
                .map(s -> s.getName()).toList());
          }

          @Override
          public void onError(Throwable t) {
            names.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {}
        });
    requests.onNext(ServerReflectionRequest.newBuilder().setListServices("*").build());
    List<String> result = names.get(5, TimeUnit.SECONDS);
    requests.onCompleted();
    return result;
  }

  /** grpcurl before 1.8.8 speaks only this older protocol. */
  @SuppressWarnings("deprecation")
  private static List<String> listServicesV1Alpha(ServerProcess server) throws Exception {
    CompletableFuture<List<String>> names = new CompletableFuture<>();
    StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> requests =
        io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(server.channel())
            .serverReflectionInfo(new StreamObserver<>() {
              @Override
              public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse response) {
                names.complete(response.getListServicesResponse().getServiceList().stream()
                    .map(s -> s.getName()).toList());
              }

              @Override
              public void onError(Throwable t) {
                names.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {}
            });
    requests.onNext(io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder().setListServices("*").build());
    List<String> result = names.get(5, TimeUnit.SECONDS);
    requests.onCompleted();
    return result;
  }

  private static boolean accepts(InetSocketAddress address) {
    try (Socket socket = new Socket()) {
      socket.connect(address, 500);
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
