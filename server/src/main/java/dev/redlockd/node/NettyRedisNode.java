package dev.redlockd.node;

import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node reached over one connection per I/O thread ({@link RedisIo}), auto-pipelined: a call
 * made on an I/O thread goes out on that thread's connection, together with everything else
 * the thread sends the node in the same pass; a call from any other thread is handed to one
 * of the loops. No thread per node and no pool: a slow node holds up only its own
 * connections, and the node timeout bounds what each call waits, connecting included.
 */
public final class NettyRedisNode implements RedisNode {
  private static final Logger log = LoggerFactory.getLogger(NettyRedisNode.class);

  private final NodeAddress address;
  private final List<RedisConnection> connections = new ArrayList<>();
  private final List<Subscriber> subscribers = new ArrayList<>();
  private final List<List<String>> handshake;
  private final Duration timeout;
  private final RedisIo io;
  private final SSLContext tls;
  private final OffLoopResolver resolver;
  private final InstanceIds identities;
  /** The last conflict logged, so that a lasting one is logged once; null while distinct. */
  private final AtomicReference<String> sameInstance = new AtomicReference<>();
  private final AtomicReference<String> unidentified = new AtomicReference<>();
  private volatile boolean closed;
  /** Why the node last refused us (login, TLS); null once it answered. Logged once per reason. */
  private final AtomicReference<String> refusal = new AtomicReference<>();

  /** On the process-wide {@link RedisIo#shared()} loops, with the JVM's TLS defaults for rediss://. */
  public NettyRedisNode(NodeAddress address, Duration timeout) {
    this(address, timeout, RedisIo.shared(), null);
  }

  /**
   * @param tls for a {@code rediss://} address, whom to trust and which client certificate to
   *     show; null: the JVM's defaults. Ignored for {@code redis://}.
   */
  public NettyRedisNode(NodeAddress address, Duration timeout, RedisIo io, SSLContext tls) {
    this(address, timeout, io, tls, new InstanceIds());
  }

  /**
   * @param identities shared by every node of one server: a node whose connection reaches an
   *     instance another node already reaches serves nothing while it does
   */
  public NettyRedisNode(NodeAddress address, Duration timeout, RedisIo io, SSLContext tls, InstanceIds identities) {
    this(address, timeout, io, tls, identities, ScriptBatch.NONE);
  }

  /**
   * @param batch the scripts whose calls made in one pass of a loop go to the node as one call
   *     ({@link ScriptBatch#NONE}: every call alone)
   */
  public NettyRedisNode(NodeAddress address, Duration timeout, RedisIo io, SSLContext tls, InstanceIds identities,
      ScriptBatch batch) {
    this(address, timeout, io, tls, OffLoopResolver.shared(), RedisConnection.MAX_PENDING, identities, batch);
  }

  /** With the host name lookup and the bound on waiting calls chosen by a test. */
  NettyRedisNode(NodeAddress address, Duration timeout, RedisIo io, SSLContext tls, OffLoopResolver resolver,
      int maxPending) {
    this(address, timeout, io, tls, resolver, maxPending, new InstanceIds(), ScriptBatch.NONE);
  }

  private NettyRedisNode(NodeAddress address, Duration timeout, RedisIo io, SSLContext tls, OffLoopResolver resolver,
      int maxPending, InstanceIds identities, ScriptBatch batch) {
    this.address = address;
    this.identities = identities;
    this.handshake = handshake(address);
    this.timeout = timeout;
    this.io = io;
    this.tls = tls;
    this.resolver = resolver;
    for (EventLoop loop : io.loops()) {
      connections.add(new RedisConnection(this, loop, io.channelType(), timeout.toNanos(), tls, resolver, maxPending,
          batch));
    }
    // The start-up probes use one of them; a gRPC call may arrive on any loop.
    connections.forEach(RedisConnection::open);
  }

  private static List<List<String>> handshake(NodeAddress address) {
    List<List<String>> commands = new ArrayList<>();
    address.password().ifPresent(password -> commands.add(address.user()
        .map(user -> List.of("AUTH", user, password))
        .orElse(List.of("AUTH", password))));
    commands.add(List.of("CLIENT", "SETNAME", "redlockd"));
    return commands;
  }

  @Override
  public String name() {
    return address.name();
  }

  NodeAddress address() {
    return address;
  }

  InstanceIds identities() {
    return identities;
  }

  long timeoutNanos() {
    return timeout.toNanos();
  }

  /** What a fresh connection sends before anything else. */
  List<List<String>> handshake() {
    return handshake;
  }

  @Override
  public CompletableFuture<Object> eval(LuaScript script, List<String> keys, List<String> args) {
    return submit(new ScriptCall(new ScriptBatch.Op(script, keys, args)));
  }

  @Override
  public CompletableFuture<Object> command(String... args) {
    return submit(new NodeCall(List.of(args), null));
  }

  private CompletableFuture<Object> submit(NodeCall call) {
    if (closed) {
      call.result.completeExceptionally(closedFailure());
      return call.result;
    }
    RedisConnection connection = pick();
    Pipelining.queue(connection, call);
    return call.result;
  }

  /**
   * The calling I/O thread's own connection; for any other thread, always the same one. Either
   * way, calls one thread makes to a node reach it in the order made (a release sent after an
   * acquire never overtakes it), and the engine's threads spread over the connections.
   */
  private RedisConnection pick() {
    for (RedisConnection connection : connections) {
      if (connection.inLoop()) {
        return connection;
      }
    }
    return connections.get(Math.floorMod(Long.hashCode(Thread.currentThread().getId()), connections.size()));
  }

  /** A pub/sub connection of its own on one of the I/O loops; it connects on its first subscription. */
  @Override
  public synchronized Subscriber subscriber(Subscriber.Listener listener) {
    if (closed) {
      return Subscriber.NONE;
    }
    Subscriber subscriber = new SubscriberConnection(this, io.loops().get(0), io.channelType(), timeout.toNanos(), tls,
        resolver, listener);
    subscribers.add(subscriber);
    return subscriber;
  }

  IllegalStateException closedFailure() {
    return new IllegalStateException("node " + name() + " is closed");
  }

  void noteAnswered() {
    if (refusal.get() != null) {
      refusal.set(null);
    }
  }

  /**
   * A wrong password, a certificate that will never be accepted, or a byte stream that is not
   * RESP fails every connection the same way, and retrying cannot help: say why once, where an
   * operator looks. (The engine only sees that the node does not answer.) Redis and JSSE name
   * no password in these messages.
   */
  void noteRefusal(Throwable failure) {
    String why = null;
    for (Throwable t = failure; t != null && why == null; t = t.getCause()) {
      if (t instanceof SSLException) {
        why = "refuses the connection: TLS handshake failed: " + t.getMessage();
      } else if (t instanceof RedisErrorReply error && error.kind().matches("NOAUTH|WRONGPASS")) {
        // Not NOPERM: that is one command denied to a user who is logged in, which its caller
        // reports (a script refused leaves the node down, with the reason; CONFIG GET skips a check).
        why = "refuses the connection: login refused: " + t.getMessage();
      } else if (t instanceof RespDecoder.MalformedReplyException) {
        // Not Redis, or something between us that corrupts the stream: no reply on it can be trusted.
        why = "sent what is not a RESP2 reply (" + t.getMessage() + "): the connection is dropped";
      }
    }
    if (why != null && !why.equals(refusal.getAndSet(why))) {
      log.warn("Redis node {} {}", address, why);
    }
  }

  /** Logged once per conflict, as an error: a quorum must never rest on one instance counted twice. */
  void noteSameInstance(SameInstanceException same) {
    if (!same.getMessage().equals(sameInstance.getAndSet(same.getMessage()))) {
      log.error("{}: its vote must count once, so {} does not vote until it reaches an instance of its own",
          same.getMessage(), address);
    }
  }

  void noteDistinct(String runId) {
    if (sameInstance.getAndSet(null) != null) {
      log.info("Redis node {} reaches a Redis instance of its own again (run_id {})", address, runId);
    }
  }

  /** Without INFO (an ACL that denies it) the node cannot be told apart from the others; said once. */
  void noteUnidentified(RedisErrorReply refused) {
    if (unidentified.compareAndSet(null, refused.getMessage())) {
      log.warn("Redis node {} refuses INFO ({}): redlockd cannot check that no other node entry reaches the "
          + "same Redis instance; allow +info to its user", address, refused.getMessage());
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      subscribers.forEach(Subscriber::close);
    }
    connections.forEach(RedisConnection::close);
    identities.forget(this);
  }

  @Override
  public String toString() {
    return "NettyRedisNode[" + address + "]";
  }
}
