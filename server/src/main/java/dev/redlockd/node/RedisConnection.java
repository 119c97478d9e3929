package dev.redlockd.node;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;

/**
 * One connection to one node, owned by one event loop: every field is touched on that loop
 * only. Calls are written as they come and flushed once per pass of the loop, so whatever the
 * loop's calls send in one pass is one pipeline; Redis answers in order, so the oldest call
 * waiting gets the next reply. Connects on first use and again after any failure.
 *
 * <p>Each call is failed with a {@link java.util.concurrent.TimeoutException} once it outlives the
 * node timeout ({@link DeadlineTimer}). The connection is kept: Redis answers in order, so a
 * late reply still finds its call (and is dropped), and a clean-up sent after a late acquire
 * still runs after it on the node. Only a connection that has not answered for
 * {@link DeadlineTimer#STUCK_NANOS} past a call's deadline is dropped and made anew.
 *
 * <p>A script goes as {@code EVAL} (its whole source) the first time a connection sends it, and by
 * {@code EVALSHA} after that: Redis runs a connection's commands in order, so every later call
 * finds it cached, even one that reaches the node after its deadline. Answering {@code NOSCRIPT}
 * to a call that already timed out would lose it, and a clean-up sent to a node that answered
 * late must still run there (docs/engine.md). Only a node whose script cache is flushed while
 * the connection stays open ({@code SCRIPT FLUSH}) still answers {@code NOSCRIPT}: the call is
 * sent again as {@code EVAL} while its caller still waits for it.
 *
 * <p>A node that refuses or drops connections before answering is tried again only after a
 * {@link ReconnectBackoff backoff}; until then calls fail at once with a
 * {@link NodeConnectionException} instead of each waiting out a connect, and no connect storm
 * hits a node that is coming back. Calls waiting on one connection are bounded: past
 * {@link #MAX_PENDING} the node is not keeping up, and a call fails at once rather than
 * growing the heap (the engine counts it as a node that did not answer).
 */
final class RedisConnection implements AttemptHandler.Connection {
  /**
   * Far above what a healthy node has waiting (one per call in flight on this loop, a few
   * hundred at the bench's heaviest load); reached only when a node stalls under a flood.
   */
  static final int MAX_PENDING = 16_384;
  /**
   * How long a connection's handshake (login, the instance's run_id) may take: the first
   * connection of a fresh process (cold classes, the first TLS handshake) can miss a node
   * timeout of 50 ms on a healthy node, and a handshake that times out drops the connection and
   * starts over. The calls behind it still fail at their own deadline.
   */
  static final long FIRST_CONTACT_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** Enough for a few lock scripts' calls; a busier pass grows the buffer. */
  private static final int PENDING_INITIAL_BYTES = 1024;

  private final NettyRedisNode node;
  private final ScriptBatch batch;
  private final EventLoop loop;
  private final long timeoutNanos;
  private final Bootstrap bootstrap;
  private final SSLContext tls; // null: the JVM's default, for rediss:// nodes
  private final int maxPending;
  private final ReconnectBackoff backoff = new ReconnectBackoff();
  /** No connect before this (System.nanoTime()); calls until then fail at once. */
  private long downUntil;
  /** Why the last attempt failed, for the calls failed while the node is down. */
  private Throwable downBecause;
  /** The current connection has had a reply: a drop now is not a failed attempt. */
  private boolean answered;
  /** Written and unanswered, or (while connecting) waiting to be written; oldest first. */
  private final ArrayDeque<NodeCall> calls = new ArrayDeque<>();
  private final DeadlineTimer deadlines;
  private final Runnable flush = this::flush;
  private Channel channel; // null: not connected
  private boolean connected;
  /** Bumped on every connect and drop, so that events of an older channel are ignored. */
  private int generation;
  private boolean flushScheduled;
  /**
   * Every command this loop's pass wrote, in one buffer handed to the channel at the flush: one
   * pooled buffer and one outbound entry per pass instead of one per command, whose allocation
   * and outbound bookkeeping stood out in the server's profile (docs/performance.md).
   */
  private ByteBuf pending;
  /**
   * Script calls this pass made, not yet written: at the flush they leave as one batch call
   * (or as themselves, when alone). Empty between passes.
   */
  private final ArrayList<NodeCall> held = new ArrayList<>();
  private int heldBytes;
  private boolean closed;
  /** SHA1s of the scripts this connection has sent as EVAL: cached on the node (unless flushed since). */
  private final java.util.Set<String> sent = new java.util.HashSet<>();

  RedisConnection(NettyRedisNode node, EventLoop loop, Class<? extends Channel> channelType, long timeoutNanos,
      SSLContext tls, OffLoopResolver resolver, int maxPending, ScriptBatch batch) {
    this.node = node;
    this.batch = batch;
    this.loop = loop;
    this.timeoutNanos = timeoutNanos;
    this.maxPending = maxPending;
    this.deadlines = new DeadlineTimer(loop, node.name(), timeoutNanos, calls::peek, this::drop);
    this.bootstrap = new Bootstrap()
        .group(loop)
        .channel(channelType)
        .resolver(resolver)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
    this.tls = tls;
  }

  private ChannelInitializer<Channel> pipeline(int attempt) {
    NodeAddress address = node.address();
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(Channel ch) throws Exception {
        if (address.tls()) {
          ch.pipeline().addLast(new SslHandler(TlsEngines.client(tls == null ? SSLContext.getDefault() : tls, address)));
        }
        ch.pipeline().addLast(new RespDecoder(), new AttemptHandler(node, RedisConnection.this, attempt));
      }
    };
  }

  boolean inLoop() {
    return loop.inEventLoop();
  }

  /** From any thread; the node timeout counts from here. */
  void submit(NodeCall call) {
    call.deadline = System.nanoTime() + timeoutNanos;
    if (loop.inEventLoop()) {
      send(call);
      return;
    }
    try {
      loop.execute(() -> send(call));
    } catch (RejectedExecutionException e) {
      call.result.completeExceptionally(node.closedFailure());
    }
  }

  /** From any thread: these calls, in this order, sent in one pass of the loop. */
  void submitAll(List<NodeCall> batch) {
    long deadline = System.nanoTime() + timeoutNanos;
    for (NodeCall call : batch) {
      call.deadline = deadline;
    }
    if (loop.inEventLoop()) {
      batch.forEach(this::send);
      return;
    }
    try {
      loop.execute(() -> batch.forEach(this::send));
    } catch (RejectedExecutionException e) {
      batch.forEach(call -> call.result.completeExceptionally(node.closedFailure()));
    }
  }

  /** Connects now rather than on the first call, which then need not fit a connect in its timeout. */
  void open() {
    try {
      loop.execute(() -> {
        if (channel == null && !closed && !down()) {
          connect();
        }
      });
    } catch (RejectedExecutionException e) {
      // shutting down
    }
  }

  private void send(NodeCall call) {
    if (closed) {
      call.result.completeExceptionally(node.closedFailure());
      return;
    }
    if (channel == null && down()) {
      call.result.completeExceptionally(new NodeConnectionException("Redis node " + node.name() + " is down ("
          + downBecause + "); trying it again in "
          + TimeUnit.NANOSECONDS.toMillis(downUntil - System.nanoTime()) + "ms", downBecause));
      return;
    }
    if (calls.size() + held.size() >= maxPending) {
      call.result.completeExceptionally(new NodeConnectionException("Redis node " + node.name() + " has "
          + (calls.size() + held.size()) + " calls waiting on one connection: not keeping up, call refused", null));
      return;
    }
    deadlines.watch(call);
    if (channel == null) {
      calls.add(call);
      deadlines.arm();
      connect();
    } else if (!connected) {
      calls.add(call);
      deadlines.arm();
    } else if (call.op() != null && batch.covers(call.op().script())) {
      hold(call);
      deadlines.arm();
    } else {
      writeHeld(); // calls leave in the order made
      calls.add(call);
      deadlines.arm();
      writeCall(call);
    }
  }

  private void hold(NodeCall call) {
    held.add(call);
    heldBytes += call.op().bytes();
    if (held.size() >= ScriptBatch.MAX_SCRIPTS || heldBytes >= ScriptBatch.MAX_BYTES) {
      writeHeld();
    } else if (!flushScheduled) {
      flushScheduled = true;
      loop.execute(flush);
    }
  }

  /** The held script calls, as one batch call (or as itself when alone). */
  private void writeHeld() {
    if (held.isEmpty()) {
      return;
    }
    NodeCall call;
    if (held.size() == 1) {
      call = held.get(0);
    } else {
      call = new BatchCall(batch, List.copyOf(held));
    }
    held.clear();
    heldBytes = 0;
    calls.add(call);
    writeCall(call);
  }

  /** A script's first call on this connection goes as EVAL, which also caches it on the node; later ones by SHA1. */
  private void writeCall(NodeCall call) {
    String sha = call.sha();
    if (sha != null && sent.add(sha)) {
      write(call.fallback());
    } else {
      write(call.command());
    }
  }

  private void write(List<String> command) {
    if (channel == null) {
      return; // a failed write dropped the connection a moment ago, failing this call with it
    }
    if (pending == null) {
      pending = channel.alloc().buffer(PENDING_INITIAL_BYTES);
    }
    RespCommand.encode(pending, command);
    if (!flushScheduled) {
      flushScheduled = true;
      // Runs after the loop's current pass: everything written until then leaves in one flush.
      loop.execute(flush);
    }
  }

  private void flush() {
    flushScheduled = false;
    writeHeld();
    ByteBuf out = pending;
    pending = null;
    if (out == null) {
      return;
    }
    if (channel != null) {
      channel.writeAndFlush(out, channel.voidPromise());
    } else {
      out.release();
    }
  }

  private boolean down() {
    return downBecause != null && downUntil - System.nanoTime() > 0;
  }

  private void connect() {
    int attempt = ++generation;
    sent.clear(); // perhaps another process now (restarted), with an empty script cache
    answered = false;
    ChannelFuture connecting = bootstrap.clone().handler(pipeline(attempt))
        .connect(node.address().host(), node.address().port());
    channel = connecting.channel();
    connected = false;
    connecting.addListener(done -> {
      if (attempt != generation) {
        connecting.channel().close();
      } else if (!done.isSuccess()) {
        drop(done.cause());
      } else {
        connected = true;
        // Login first: Redis runs a connection's commands in order, so the calls queued
        // behind it run logged in (or fail with NOAUTH, naming why).
        List<NodeCall> queued = new ArrayList<>(calls);
        calls.clear();
        long setupDeadline = System.nanoTime() + Math.max(timeoutNanos, FIRST_CONTACT_NANOS);
        for (List<String> command : node.handshake()) {
          if (attempt != generation) {
            break; // a write failed and dropped the connection
          }
          NodeCall setup = new NodeCall(command, null, true);
          // A refused login fails the calls behind it with its reason, not NOAUTH.
          boolean required = !command.get(0).equals("CLIENT");
          setup.result.whenComplete((reply, failure) -> {
            if (failure != null && required && attempt == generation) {
              drop(failure);
            }
          });
          sendSetup(setup, setupDeadline);
        }
        if (attempt == generation) {
          // Last: which instance this is, read before any reply to a call behind it is taken.
          NodeCall identify = new NodeCall(List.of("INFO", "server"), null, true);
          identify.result.whenComplete((reply, failure) -> {
            if (attempt == generation) {
              identified(reply, failure);
            }
          });
          sendSetup(identify, setupDeadline);
        }
        for (NodeCall call : queued) {
          if (attempt != generation) {
            call.result.completeExceptionally(new NodeConnectionException(
                "connection to Redis node " + node.name() + " closed as it opened", null));
            continue;
          }
          calls.add(call);
          writeCall(call);
        }
      }
    });
  }

  /** Setup calls keep out of the deadline-ordered queue: their deadline is later than the calls' behind them. */
  private void sendSetup(NodeCall setup, long deadline) {
    setup.deadline = deadline;
    calls.add(setup);
    write(setup.command());
    deadlines.expireAlone(setup);
  }

  /**
   * The instance's INFO reply: the connection serves the node only if no other node already
   * reaches that instance. A node that may not run INFO (an ACL without it) is taken as a
   * distinct instance, and the node says once that it could not tell.
   */
  private void identified(Object reply, Throwable failure) {
    String runId;
    if (failure instanceof RedisErrorReply refused) {
      node.noteUnidentified(refused);
      runId = null;
    } else if (failure != null) {
      drop(failure);
      return;
    } else {
      runId = InstanceIds.runId(reply);
    }
    InstanceIds.Verdict verdict = node.identities().reached(this, node, runId, System.nanoTime());
    if (verdict.accepted()) {
      node.noteDistinct(runId);
    } else {
      SameInstanceException same = new SameInstanceException(node.address(), verdict.owner().address(), runId);
      node.noteSameInstance(same);
      drop(same);
    }
  }

  @Override
  public void onReply(Object reply) {
    NodeCall call = calls.poll();
    if (call == null) {
      drop(new IllegalStateException("a reply nobody asked for"));
      return;
    }
    if (reply instanceof RedisErrorReply error) {
      if (call.sha() != null && error.kind().equals("NOSCRIPT")) {
        sent.remove(call.sha()); // flushed: the next call sends it whole again
      }
      if (call.fallback() != null && !call.retried && !done(call) && error.kind().equals("NOSCRIPT")) {
        // The node's script cache was flushed: EVAL runs the script and caches it again.
        call.retried = true;
        calls.add(call);
        write(call.fallback());
        sent.add(call.sha());
        deadlines.expireAlone(call);
        return;
      }
      node.noteRefusal(error);
      call.fail(error);
      return;
    }
    if (!answered && !call.setup) {
      // Only a real answer: a node refusing our login answers too, with an error, every time;
      // and a duplicate instance answers its handshake before it is refused.
      answered = true;
      backoff.reset();
      downBecause = null;
    }
    node.noteAnswered();
    if (call instanceof BatchCall batched) {
      answer(batched, reply);
    } else {
      call.result.complete(reply == RespDecoder.NIL ? null : reply);
    }
  }

  /** One reply per script, in order; a script's error is its own. */
  private void answer(BatchCall batched, Object reply) {
    if (!(reply instanceof List<?> replies) || replies.size() != batched.parts.size()) {
      batched.fail(new IllegalStateException("Redis node " + node.name() + " answered a batch of "
          + batched.parts.size() + " scripts with " + reply));
      return;
    }
    for (int i = 0; i < replies.size(); i++) {
      Object part = replies.get(i);
      if (part instanceof RedisErrorReply error) {
        batched.parts.get(i).result.completeExceptionally(error);
      } else {
        batched.parts.get(i).result.complete(part);
      }
    }
  }

  /** Answered or timed out already: nothing is waiting for a retry. */
  private static boolean done(NodeCall call) {
    if (call instanceof BatchCall batched) {
      return batched.parts.stream().allMatch(part -> part.result.isDone());
    }
    return call.result.isDone();
  }

  /** Fails every call on this connection and closes it; the next call connects afresh. */
  private void drop(Throwable cause) {
    generation++;
    if ((!answered || cause instanceof SameInstanceException) && !closed) {
      // Refused, reset or silent before any reply: this attempt failed, so the next one waits.
      downUntil = System.nanoTime() + backoff.failedNanos();
      downBecause = cause;
    }
    answered = false;
    if (pending != null) {
      pending.release(); // commands for the connection being dropped; their calls fail below
      pending = null;
    }
    Channel old = channel;
    channel = null;
    connected = false;
    Throwable failure = cause instanceof TimeoutException
        ? cause
        : new NodeConnectionException("connection to Redis node " + node.name() + " failed: " + cause, cause);
    NodeCall call;
    while ((call = calls.poll()) != null) {
      call.fail(failure);
    }
    held.forEach(c -> c.result.completeExceptionally(failure));
    held.clear();
    heldBytes = 0;
    deadlines.clear();
    if (old != null) {
      old.close();
    }
  }

  /** From any thread: fails what is queued and closes the connection for good. */
  void close() {
    try {
      loop.execute(() -> {
        closed = true;
        drop(node.closedFailure());
      });
    } catch (RejectedExecutionException e) {
      // The loop is gone, and the calls queued on it with it; nothing is left to fail.
    }
  }

  @Override
  public int generation() {
    return generation;
  }

  @Override
  public void onFailure(Throwable cause) {
    drop(cause);
  }
}
