package dev.redlockd.node;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.commands.ProtocolCommand;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.SafeEncoder;

/**
 * A node reached through its own JedisPool, auto-pipelined: a few sender threads, one
 * connection each, take everything queued for the node and send it as one pipeline. Under
 * load one round trip carries many calls (renewals due together, contending acquires); when
 * idle a call goes out alone at once. A slow node ties up only its own senders, and the node
 * timeout bounds what a caller waits, queueing included.
 */
public final class JedisRedisNode implements RedisNode {
  private static final Logger log = LoggerFactory.getLogger(JedisRedisNode.class);
  /** Enough to amortise a round trip; small enough that one batch never nears the node timeout. */
  private static final int MAX_BATCH = 256;

  private final NodeAddress address;
  private final Duration timeout;
  private final JedisPool pool;
  private final BlockingQueue<Call> queue = new LinkedBlockingQueue<>();
  private final List<Thread> senders = new ArrayList<>();
  private volatile boolean closed;
  /** Why the node last refused us (login, TLS); null once a batch got through. Logged once per reason. */
  private final AtomicReference<String> refusal = new AtomicReference<>();

  /** One queued call: what to append to a pipeline, and how to answer it if NOSCRIPT comes back. */
  private record Call(Function<Pipeline, Response<Object>> send, Function<Pipeline, Response<Object>> retry,
      CompletableFuture<Object> result) {}

  /** A node reached over plaintext, or for {@code rediss://} with the JVM's default TLS settings. */
  public JedisRedisNode(NodeAddress address, Duration timeout, int connections) {
    this(address, timeout, connections, null);
  }

  /**
   * @param tls for a {@code rediss://} address, the sockets to use (whom to trust, which client
   *     certificate to show); null: the JVM's defaults. Ignored for {@code redis://}.
   */
  public JedisRedisNode(NodeAddress address, Duration timeout, int connections, SSLSocketFactory tls) {
    this.address = address;
    this.timeout = timeout;
    int timeoutMs = (int) Math.max(1, timeout.toMillis());
    DefaultJedisClientConfig.Builder client = DefaultJedisClientConfig.builder()
        .connectionTimeoutMillis(timeoutMs)
        .socketTimeoutMillis(timeoutMs)
        .database(address.database())
        .clientName("redlockd")
        .autoNegotiateProtocol(false)
        .ssl(address.tls());
    if (address.tls()) {
      // Jedis's newer SslOptions takes only key-store files; the PEM flags arrive as a socket factory.
      if (tls != null) {
        client.sslSocketFactory(tls);
      }
      // Jedis checks no host name by itself: without this any certificate the trusted
      // authorities ever signed would do, for any host.
      SSLParameters checkHost = new SSLParameters();
      checkHost.setEndpointIdentificationAlgorithm("HTTPS");
      client.sslParameters(checkHost);
    }
    address.user().ifPresent(client::user);
    address.password().ifPresent(client::password);
    GenericObjectPoolConfig<Jedis> poolConfig = new GenericObjectPoolConfig<>();
    poolConfig.setMaxTotal(connections);
    poolConfig.setMaxIdle(connections);
    poolConfig.setMinIdle(0);
    poolConfig.setMaxWait(timeout);
    // JMX registration would collide when tests run several engines in one JVM.
    poolConfig.setJmxEnabled(false);
    this.pool = new JedisPool(poolConfig, new HostAndPort(address.host(), address.port()), client.build());
    for (int i = 0; i < connections; i++) {
      Thread sender = new Thread(this::sendLoop, "redis-" + address.name() + "-" + i);
      sender.setDaemon(true);
      senders.add(sender);
      sender.start();
    }
  }

  @Override
  public String name() {
    return address.name();
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    // NOSCRIPT: first use on this node, or it restarted; EVAL runs it and caches it again.
    return enqueue(p -> p.evalsha(script.sha1(), keys, args), p -> p.eval(script.source(), keys, args));
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    ProtocolCommand name = () -> SafeEncoder.encode(args[0]);
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    return enqueue(p -> p.sendCommand(name, rest), null);
  }

  private CompletableFuture<Object> enqueue(Function<Pipeline, Response<Object>> send,
      Function<Pipeline, Response<Object>> retry) {
    CompletableFuture<Object> result = new CompletableFuture<>();
    if (closed) {
      result.completeExceptionally(new IllegalStateException("node " + name() + " is closed"));
      return result;
    }
    Call call = new Call(send, retry, result);
    // The clock starts when the call is queued: time spent held in Pipelining.together, while
    // the caller builds the rest of its batch, is not the node's slowness.
    Pipelining.queue(this, () -> {
      result.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
      queue.add(call);
    });
    return result;
  }

  private void sendLoop() {
    List<Call> batch = new ArrayList<>(MAX_BATCH);
    while (!closed) {
      try {
        Call first = queue.poll(200, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        batch.add(first);
        queue.drainTo(batch, MAX_BATCH - 1);
        batch.removeIf(call -> call.result().isDone()); // timed out while queued: the caller moved on
        if (!batch.isEmpty()) {
          send(batch);
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        log.warn("unexpected failure sending to Redis node {}", name(), e);
        batch.forEach(call -> call.result().completeExceptionally(e));
      } finally {
        batch.clear();
      }
    }
  }

  private void send(List<Call> batch) {
    try (Jedis jedis = pool.getResource()) {
      List<Call> noScript = new ArrayList<>();
      List<Response<Object>> replies = sendAll(jedis, batch, Call::send);
      for (int i = 0; i < batch.size(); i++) {
        Call call = batch.get(i);
        try {
          call.result().complete(decode(replies.get(i).get()));
        } catch (JedisNoScriptException e) {
          noScript.add(call);
        } catch (RuntimeException e) {
          call.result().completeExceptionally(e);
        }
      }
      if (!noScript.isEmpty()) {
        List<Response<Object>> retried = sendAll(jedis, noScript, Call::retry);
        for (int i = 0; i < noScript.size(); i++) {
          try {
            noScript.get(i).result().complete(decode(retried.get(i).get()));
          } catch (RuntimeException e) {
            noScript.get(i).result().completeExceptionally(e);
          }
        }
      }
      if (refusal.get() != null) {
        refusal.set(null);
      }
    } catch (RuntimeException e) {
      // Connection lost or timed out: the connection is dropped and every call in the batch fails.
      noteRefusal(e);
      batch.forEach(call -> call.result().completeExceptionally(e));
    }
  }

  /**
   * A wrong password or a certificate that will never be accepted fails every connection the
   * same way, and retrying cannot help: say why once, where an operator looks. (The engine only
   * sees that the node does not answer, and the first failure after start-up is often a timeout
   * of the cold first connection.) Redis and JSSE name no password in these messages.
   */
  private void noteRefusal(RuntimeException e) {
    String why = null;
    for (Throwable t = e; t != null && why == null; t = t.getCause()) {
      if (t instanceof SSLException) {
        why = "TLS handshake failed: " + t.getMessage();
      } else if (t instanceof JedisAccessControlException
          || (t instanceof JedisDataException && String.valueOf(t.getMessage()).matches("(NOAUTH|WRONGPASS|NOPERM).*"))) {
        why = "login refused: " + t.getMessage();
      }
    }
    if (why != null && !why.equals(refusal.getAndSet(why))) {
      log.warn("Redis node {} refuses the connection: {}", address, why);
    }
  }

  private static List<Response<Object>> sendAll(Jedis jedis, List<Call> calls,
      Function<Call, Function<Pipeline, Response<Object>>> which) {
    Pipeline pipeline = jedis.pipelined();
    List<Response<Object>> replies = new ArrayList<>(calls.size());
    for (Call call : calls) {
      replies.add(which.apply(call).apply(pipeline));
    }
    pipeline.sync();
    return replies;
  }

  /** Turns byte[] bulk replies (from plain commands) into Strings, recursively. */
  private static Object decode(Object reply) {
    if (reply instanceof byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
    if (reply instanceof List<?> list) {
      return list.stream().map(JedisRedisNode::decode).toList();
    }
    return reply;
  }

  @Override
  public void close() {
    closed = true;
    senders.forEach(Thread::interrupt);
    Call call;
    while ((call = queue.poll()) != null) {
      call.result().completeExceptionally(new IllegalStateException("node " + name() + " is closed"));
    }
    pool.close();
  }

  @Override
  public String toString() {
    return "JedisRedisNode[" + address + "]";
  }
}
