package dev.redlockd.node;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.MaintNotificationsConfig;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.resolver.DefaultAddressResolverGroup;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/** How Lettuce is set up for one node: on redlockd's loops, with redlockd's timeouts and failure semantics. */
final class LettuceSettings {
  /** A node back after a drop is found within this, as the built-in client's next call would find it. */
  private static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);

  private LettuceSettings() {}

  /**
   * Lettuce starts no threads of its own: I/O, timeouts, reconnects and its event bus all run
   * on the {@link RedisIo} loops. One set per node, as each node's TLS names its own host;
   * closing it leaves the loops running.
   */
  static ClientResources resources(RedisIo io, NodeAddress address, SSLContext tls) {
    ClientResources.Builder builder = ClientResources.builder()
        .eventLoopGroupProvider(new SharedEventLoops(io))
        .eventExecutorGroup(io.group())
        .timer(new LoopTimer(io))
        // Resolved as the built-in client resolves (the JDK's resolver), not by Netty's DNS client.
        .addressResolverGroup(DefaultAddressResolverGroup.INSTANCE)
        .commandLatencyRecorder(CommandLatencyRecorder.disabled())
        .reconnectDelay(Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS));
    if (address.tls()) {
      builder.nettyCustomizer(new LettuceTls(tls == null ? defaultTls() : tls, address));
    }
    return builder.build();
  }

  private static SSLContext defaultTls() {
    try {
      return SSLContext.getDefault();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no default TLS context", e);
    }
  }

  /**
   * Reconnecting stays on, but nothing is queued or replayed around a drop. By default Lettuce
   * holds the commands made while it is disconnected, and puts those in flight when the
   * connection dropped back in its queue, and sends them all once it is back: a lock command
   * would then reach the node late, maybe twice (was the first one run before the drop?), and
   * behind or ahead of the calls made since (a release overtaken by the acquire it undoes).
   * The engine has already counted such a node as silent and moved on. With REJECT_COMMANDS a
   * call made while disconnected fails at once, and those in flight fail with the drop, as
   * with the built-in client; the replay filter refuses every replay should anything still
   * reach that path.
   */
  static ClientOptions options(Duration timeout) {
    return ClientOptions.builder()
        // RESP2, as the built-in client speaks it: no HELLO, and the replies the engine reads.
        .protocolVersion(ProtocolVersion.RESP2)
        // The README's least-privilege ACL user may not PING; the built-in client sends none either.
        .pingBeforeActivateConnection(false)
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .replayFilter(command -> true)
        .timeoutOptions(TimeoutOptions.enabled(timeout))
        .socketOptions(SocketOptions.builder().connectTimeout(timeout).tcpNoDelay(true).build())
        // Redis Enterprise's maintenance push messages need RESP3; plain Redis sends none.
        .maintNotificationsConfig(MaintNotificationsConfig.disabled())
        .build();
  }

  /** Login and database as the built-in client does them; TLS is {@link LettuceTls}'s, not Lettuce's. */
  static RedisURI uri(NodeAddress address, Duration timeout) {
    RedisURI.Builder uri = RedisURI.Builder.redis(address.host(), address.port())
        .withDatabase(address.database())
        .withClientName("redlockd")
        .withTimeout(timeout);
    address.password().ifPresent(password -> {
      if (address.user().isPresent()) {
        uri.withAuthentication(address.user().get(), password);
      } else {
        uri.withPassword(password);
      }
    });
    return uri.build();
  }
}
