package dev.redlockd.it.startup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What a server process says and where it listens, given its nodes and --bind. */
class NodesAndBindTest {

  @Test
  void oneOrTwoNodesWarnThatNoFailureIsTolerated() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(2);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      assertThat(server.log()).contains("2 Redis nodes: quorum 2 of 2, the service stops if any one node fails; "
          + "use 3 or more");
    }
  }

  @Test
  void threeNodesDoNotWarn() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      assertThat(server.log()).contains("Redlock over 3 Redis nodes").doesNotContain("use 3 or more");
    }
  }

  @Test
  void bindToLoopbackIsUnreachableThroughAnotherAddressOfThisMachine() throws Exception {
    Optional<InetAddress> other = otherLocalAddress();
    try (RedisCluster cluster = RedisCluster.start(3)) {
      try (ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag(), "--bind", "127.0.0.1")) {
        assertThat(accepts(InetAddress.getLoopbackAddress(), server.port())).isTrue();
        assumeTrue(other.isPresent(), "this machine has no address but loopback");
        assertThat(accepts(other.get(), server.port())).as("reachable through " + other.get()).isFalse();
      }
      // The same probe does reach a server on every interface: the refusal above is --bind's doing.
      try (ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
        assertThat(accepts(other.get(), server.port())).as("reachable through " + other.get()).isTrue();
      }
    }
  }

  /** An IPv4 address of an interface that is up and not loopback. */
  private static Optional<InetAddress> otherLocalAddress() throws SocketException {
    return NetworkInterface.networkInterfaces()
        .filter(NodesAndBindTest::usable)
        .flatMap(NetworkInterface::inetAddresses)
        .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress())
        .findFirst();
  }

  private static boolean usable(NetworkInterface nic) {
    try {
      return nic.isUp() && !nic.isLoopback();
    } catch (SocketException e) {
      return false;
    }
  }

  private static boolean accepts(InetAddress address, int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(address, port), 2000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
