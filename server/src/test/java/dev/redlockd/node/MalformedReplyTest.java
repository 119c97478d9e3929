package dev.redlockd.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A "node" that answers with bytes that are not RESP (a proxy that corrupts the stream, or not
 * Redis at all): the call fails at once instead of waiting out its timeout, the connection is
 * closed, and one log line says why.
 */
class MalformedReplyTest {
  @Test
  void aReplyThatIsNotRespFailsTheCallClosesTheConnectionAndSaysSoOnce() throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(NettyRedisNode.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    AtomicInteger garbageSent = new AtomicInteger();
    AtomicInteger closedByClient = new AtomicInteger();
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread fake = new Thread(() -> {
        while (!server.isClosed()) {
          try (Socket s = server.accept()) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            if (in.read(new byte[4096]) > 0) {
              out.write("$3\r\nabcXY".getBytes(StandardCharsets.US_ASCII)); // no CRLF after the bulk
              out.flush();
              garbageSent.incrementAndGet();
            }
            // The client may still be writing (its handshake and the call go out in several
            // writes, which a loaded machine delivers apart): the close is the end of the stream,
            // after whatever else it sent, not the next byte.
            s.setSoTimeout(10_000);
            byte[] rest = new byte[4096];
            int n;
            do {
              n = in.read(rest);
            } while (n > 0);
            if (n == -1) {
              closedByClient.incrementAndGet();
            }
          } catch (Exception e) {
            // the test closed the server socket
          }
        }
      }, "fake-node");
      fake.setDaemon(true);
      fake.start();

      try (NettyRedisNode node = new NettyRedisNode(
          NodeAddress.parse("redis://127.0.0.1:" + server.getLocalPort()), Duration.ofSeconds(5))) {
        for (int i = 0; i < 3; i++) {
          long start = System.nanoTime();
          Throwable failure = catchThrowable(() -> node.command("PING").get(10, TimeUnit.SECONDS));
          assertThat(failure).hasCauseInstanceOf(NodeConnectionException.class)
              .hasStackTraceContaining("not followed by CRLF");
          assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
              .as("failed at once, not after the 5 s timeout").isLessThan(2_000);
        }
        // Each connection that carried garbage is closed by the client, while the node is still open.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (closedByClient.get() < garbageSent.get() && System.nanoTime() < deadline) {
          Thread.sleep(10);
        }
        // The first call's connection got garbage; the calls after it may have failed on the
        // backoff that followed, without a connection of their own (the failure names its cause).
        assertThat(garbageSent.get()).as("connections that got garbage").isBetween(1, 3);
        assertThat(closedByClient.get()).as("of those, closed by the client").isEqualTo(garbageSent.get());
      }
    } finally {
      logger.detachAppender(lines);
    }
    List<String> warnings = lines.list.stream().map(ILoggingEvent::getFormattedMessage)
        .filter(m -> m.contains("not a RESP2 reply")).toList();
    assertThat(warnings).hasSize(1);
    assertThat(warnings.get(0)).contains("127.0.0.1").contains("bulk string not followed by CRLF")
        .contains("the connection is dropped");
  }
}
