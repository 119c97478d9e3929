package dev.redlockd.node;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.resource.ClientResources;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node reached through Lettuce, over one connection shared by every thread, on the
 * {@link RedisIo} loops. Lettuce writes each call as it is made (no holding back for
 * {@link Pipelining#together}) and keeps the connection up; replies come as the built-in
 * client gives them (RESP2; integers Long, strings String, arrays List, nil null) and failures
 * as it fails ({@link LettuceFailures}).
 */
public final class LettuceRedisNode implements RedisNode {
  private static final Logger log = LoggerFactory.getLogger(LettuceRedisNode.class);

  private final NodeAddress address;
  private final Duration timeout;
  private final ClientResources resources;
  private final RedisClient client;
  private final RedisURI uri;
  /** The connect under way or done; a failed one is tried again by the next call. */
  private CompletableFuture<StatefulRedisConnection<String, String>> connecting; // guarded by this
  /** Once connected; Lettuce reconnects it after a drop. */
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile boolean closed;
  /** Why the node last refused us (login, TLS); null once it answered. Logged once per reason. */
  private final AtomicReference<String> refusal = new AtomicReference<>();

  /** On the process-wide {@link RedisIo#shared()} loops, with the JVM's TLS defaults for rediss://. */
  public LettuceRedisNode(NodeAddress address, Duration timeout) {
    this(address, timeout, RedisIo.shared(), null);
  }

  /**
   * @param tls for a {@code rediss://} address, whom to trust and which client certificate to
   *     show; null: the JVM's defaults. Ignored for {@code redis://}.
   */
  public LettuceRedisNode(NodeAddress address, Duration timeout, RedisIo io, SSLContext tls) {
    this.address = address;
    this.timeout = timeout;
    this.resources = LettuceSettings.resources(io, address, tls);
    this.client = RedisClient.create(resources);
    client.setOptions(LettuceSettings.options(timeout));
    this.uri = LettuceSettings.uri(address, timeout);
    // Connects now rather than on the first call, which then need not fit a connect in its timeout.
    connection();
  }

  @Override
  public String name() {
    return address.name();
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    return run(commands -> commands.dispatch(CommandType.EVALSHA, new EngineReplyOutput(), evalArgs(script.sha1(), keys, args))
        .exceptionallyCompose(failure -> LettuceFailures.isNoScript(failure)
            // First use on this node, or it restarted: EVAL runs the script and caches it
            // again. It gets a timeout of its own; this happens once per script and node start.
            ? commands.dispatch(CommandType.EVAL, new EngineReplyOutput(), evalArgs(script.source(), keys, args))
            : CompletableFuture.failedStage(failure)));
  }

  private static CommandArgs<String, String> evalArgs(String script, List<String> keys, List<String> args) {
    CommandArgs<String, String> parts = new CommandArgs<>(StringCodec.UTF8).add(script).add(keys.size());
    keys.forEach(parts::addKey);
    args.forEach(parts::addValue);
    return parts;
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    CommandArgs<String, String> rest = new CommandArgs<>(StringCodec.UTF8);
    for (int i = 1; i < args.length; i++) {
      rest.add(args[i]);
    }
    Keyword keyword = new Keyword(args[0]);
    return run(commands -> commands.dispatch(keyword, new EngineReplyOutput(), rest));
  }

  /** Any command by name: start-up checks send commands Lettuce's API may not have. */
  private record Keyword(String command) implements ProtocolKeyword {
    @Override
    public byte[] getBytes() {
      return command.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
      return command;
    }
  }

  private CompletableFuture<Object> run(Function<RedisAsyncCommands<String, String>, CompletionStage<Object>> call) {
    CompletableFuture<Object> result = new CompletableFuture<>();
    if (closed) {
      result.completeExceptionally(closedFailure());
      return result;
    }
    StatefulRedisConnection<String, String> up = connection;
    CompletionStage<Object> reply;
    try {
      reply = up != null
          ? call.apply(up.async())
          // The first calls, or one after a failed connect: waiting for the connection counts
          // against the node timeout too.
          : connection().thenCompose(c -> call.apply(c.async())).orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedStage(e);
    }
    // Completed with the engine's exception itself, not wrapped, as the built-in client does.
    reply.whenComplete((value, failure) -> {
      if (failure == null) {
        result.complete(value);
      } else {
        result.completeExceptionally(closed ? closedFailure()
            : LettuceFailures.translate(failure, name(), timeout.toMillis()));
      }
    });
    return result;
  }

  private synchronized CompletableFuture<StatefulRedisConnection<String, String>> connection() {
    if (connecting == null || connecting.isCompletedExceptionally()) {
      CompletableFuture<StatefulRedisConnection<String, String>> attempt =
          client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture();
      connecting = attempt;
      attempt.whenComplete(this::connected);
    }
    return connecting;
  }

  private synchronized void connected(StatefulRedisConnection<String, String> made, Throwable failure) {
    if (failure != null) {
      noteRefusal(failure);
    } else if (closed) {
      made.closeAsync();
    } else {
      connection = made;
      refusal.set(null);
    }
  }

  /**
   * A wrong password or a certificate that will never be accepted fails every connect the same
   * way, and retrying cannot help: say why once, where an operator looks. (The engine only
   * sees that the node does not answer.)
   */
  private void noteRefusal(Throwable failure) {
    String why = LettuceFailures.refusal(failure);
    if (why != null && !why.equals(refusal.getAndSet(why))) {
      log.warn("Redis node {} refuses the connection: {}", address, why);
    }
  }

  private IllegalStateException closedFailure() {
    return new IllegalStateException("node " + name() + " is closed");
  }

  /** Does not wait: it may be called on an I/O thread, which Lettuce's closing needs. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      connection = null;
    }
    client.shutdownAsync(0, 1, TimeUnit.SECONDS)
        .whenComplete((done, failure) -> resources.shutdown(0, 1, TimeUnit.SECONDS));
  }

  @Override
  public String toString() {
    return "LettuceRedisNode[" + address + "]";
  }
}
