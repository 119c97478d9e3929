package dev.redlockd.node;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which client the server talks to its nodes with: the built-in one unless the JVM is started
 * with {@code -Dredlockd.node-client=lettuce}. Not a flag on purpose: it exists so that one
 * server jar can be measured with either, until the measurement has chosen one.
 */
public final class NodeClients {
  public static final String PROPERTY = "redlockd.node-client";
  private static final Logger log = LoggerFactory.getLogger(NodeClients.class);
  /** Said once, not once per node: a run measured on the other client must be told apart. */
  private static final AtomicBoolean announced = new AtomicBoolean();

  private NodeClients() {}

  public static RedisNode open(NodeAddress address, Duration timeout, RedisIo io, SSLContext tls) {
    String client = System.getProperty(PROPERTY, "netty").strip().toLowerCase(Locale.ROOT);
    return switch (client) {
      case "netty" -> new NettyRedisNode(address, timeout, io, tls);
      case "lettuce" -> {
        if (!announced.getAndSet(true)) {
          log.info("Redis node client: Lettuce (-D{}=lettuce)", PROPERTY);
        }
        yield new LettuceRedisNode(address, timeout, io, tls);
      }
      default -> throw new IllegalArgumentException(
          "-D" + PROPERTY + " is netty or lettuce, not: " + client);
    };
  }
}
