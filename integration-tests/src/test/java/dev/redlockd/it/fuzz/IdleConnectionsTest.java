package dev.redlockd.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.redlockd.testing.RedisCluster;
import dev.redlockd.testing.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * 10,000 clients that connect, say hello in HTTP/2 and then say nothing: the server (a real
 * process, so its descriptors can be counted) holds them all, keeps serving everyone else, and
 * lets go of every descriptor once they hang up. Each connection costs a descriptor on both
 * sides; when {@code ulimit -n} is too low for that, fewer are opened and the test says so.
 */
class IdleConnectionsTest {
  private static final int WANTED = 10_000;
  /** Descriptors a JVM needs besides the connections: jars, epoll, pipes, the Redis pools. */
  private static final int HEADROOM = 1_000;
  /** The HTTP/2 client preface and an empty SETTINGS frame: a connection a gRPC server accepts as a client's. */
  private static final byte[] HELLO = concat("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
      new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0});

  @Test
  void tenThousandIdleConnectionsLeaveTheServerServingAndAreAllReleased() throws Exception {
    long limit = openFileLimit();
    int count = (int) Math.min(WANTED, limit - HEADROOM);
    Assumptions.assumeTrue(count >= 1_000, "ulimit -n is " + limit + ": too low for a meaningful number of"
        + " idle connections; raise it to at least " + (WANTED + HEADROOM) + " to run this test");
    if (count < WANTED) {
      System.out.printf("ulimit -n is %d: opening %d idle connections instead of %d%n", limit, count, WANTED);
    }
    try (RedisCluster cluster = RedisCluster.start(3);
        ServerProcess server = ServerProcess.start("--redis", cluster.redisFlag())) {
      ServerChecks.assertServes(server.channel());
      long baseline = openDescriptors(server.pid());
      List<SocketChannel> idle = new ArrayList<>(count);
      try {
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
          SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.port()));
          idle.add(c);
          c.write(ByteBuffer.wrap(HELLO));
        }
        System.out.printf("%d idle connections opened in %.1f s%n", count, (System.nanoTime() - start) / 1e9);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
            .until(() -> openDescriptors(server.pid()) >= baseline + count);

        long served = System.nanoTime();
        ServerChecks.assertServes(server.channel());
        System.out.printf("with %d idle connections open, health and a lock cycle took %.0f ms%n", count,
            (System.nanoTime() - served) / 1e6);
        assertThat(server.isAlive()).isTrue();
      } finally {
        for (SocketChannel c : idle) {
          c.close();
        }
      }
      // The server notices each FIN and closes its end: back to about where it started.
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
          .until(() -> openDescriptors(server.pid()) <= baseline + 50);
      ServerChecks.assertServes(server.channel());
    }
  }

  /** The soft "Max open files" of this JVM, which the server process it starts inherits. */
  private static long openFileLimit() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
      if (line.startsWith("Max open files")) {
        String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
        return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
      }
    }
    return 1024;
  }

  private static long openDescriptors(long pid) {
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      return fds.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = new byte[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
