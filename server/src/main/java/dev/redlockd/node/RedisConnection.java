package dev.redlockd.node;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;

/**
 * One connection to one node, owned by one event loop: every field is touched on that loop
 * only. Calls are written as they come and flushed once per pass of the loop, so whatever the
 * loop's calls send in one pass is one pipeline; Redis answers in order, so the oldest call
 * waiting gets the next reply. Connects on first use and again after any failure.
 *
 * <p>One timer per connection, not one per call, fails each call that outlives the node
 * timeout with a {@link TimeoutException} (after one more pass of the loop over its sockets,
 * so that a reply that came while the loop was busy is not taken for silence). The connection is kept: Redis answers in order, so
 * a late reply still finds its call (and is dropped), and a clean-up sent after a late
 * acquire still runs after it on the node. Only a connection that has not answered for
 * {@link #STUCK_NANOS} past a call's deadline is dropped and made anew.
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
final class RedisConnection {
  /** A node silent this long past a deadline is frozen or gone, not busy. */
  static final long STUCK_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** The timer wakes at most this often: at 10,000 calls a second, not once per call. */
  private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
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
  private final ArrayDeque<Call> calls = new ArrayDeque<>();
  /** The same calls in deadline order, for the timer; answered ones leave when it next runs. */
  private final ArrayDeque<Call> watched = new ArrayDeque<>();
  private final Runnable flush = this::flush;
  private Channel channel; // null: not connected
  private boolean connected;
  /** Bumped on every connect and drop, so that events of an older channel are ignored. */
  private int generation;
  private ScheduledFuture<?> timer;
  private long timerAt; // when the timer runs, on System.nanoTime()
  /** The timer found a call past its deadline and gave the loop one pass to read its reply. */
  private boolean readSinceDue;
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
  private final ArrayList<Call> held = new ArrayList<>();
  private int heldBytes;
  private boolean closed;
  private TimeoutException timedOut; // made at the first timeout, see timeout()
  /** SHA1s of the scripts this connection has sent as EVAL: cached on the node (unless flushed since). */
  private final java.util.Set<String> sent = new java.util.HashSet<>();

  /** One call: its command, the EVAL form to fall back on after NOSCRIPT (or null), its future. */
  static class Call {
    private final List<String> command;
    private final List<String> fallback;
    final CompletableFuture<Object> result = new CompletableFuture<>();
    long deadline;
    boolean retried;
    /** Part of a connection's handshake: its reply says nothing about the calls behind it. */
    final boolean setup;

    Call(List<String> command, List<String> fallback) {
      this(command, fallback, false);
    }

    private Call(List<String> command, List<String> fallback, boolean setup) {
      this.command = command;
      this.fallback = fallback;
      this.setup = setup;
    }

    List<String> command() {
      return command;
    }

    List<String> fallback() {
      return fallback;
    }

    /** The SHA1 of the script it runs; null for a plain command. */
    String sha() {
      return null;
    }

    /** The script call it makes, when it may join a batch; null for a plain command. */
    ScriptBatch.Op op() {
      return null;
    }
  }

  /** A script call that may go in a {@link ScriptBatch} with others. */
  static final class ScriptCall extends Call {
    private final ScriptBatch.Op op;

    /** Its EVALSHA and EVAL forms are made only if it goes alone. */
    ScriptCall(ScriptBatch.Op op) {
      super(null, null);
      this.op = op;
    }

    @Override
    List<String> command() {
      return form("EVALSHA", op.script().sha1());
    }

    @Override
    List<String> fallback() {
      return form("EVAL", op.script().source());
    }

    @Override
    String sha() {
      return op.script().sha1();
    }

    private List<String> form(String command, String script) {
      List<String> parts = new ArrayList<>(3 + op.keys().size() + op.args().size());
      parts.add(command);
      parts.add(script);
      parts.add(Integer.toString(op.keys().size()));
      parts.addAll(op.keys());
      parts.addAll(op.args());
      return parts;
    }

    @Override
    ScriptBatch.Op op() {
      return op;
    }
  }

  /** Several script calls sent as one; each keeps its own future and deadline. */
  private static final class BatchCall extends Call {
    final List<Call> parts;
    private final ScriptBatch batch;
    private final List<ScriptBatch.Op> ops;

    BatchCall(ScriptBatch batch, List<Call> parts) {
      super(null, null);
      this.batch = batch;
      this.parts = parts;
      this.ops = new ArrayList<>(parts.size());
      for (Call part : parts) {
        ops.add(part.op());
      }
      this.deadline = parts.get(0).deadline;
    }

    @Override
    List<String> command() {
      return batch.command("EVALSHA", ops);
    }

    @Override
    List<String> fallback() {
      return batch.command("EVAL", ops);
    }

    @Override
    String sha() {
      return batch.script().sha1();
    }
  }

  RedisConnection(NettyRedisNode node, EventLoop loop, Class<? extends Channel> channelType, long timeoutNanos,
      SSLContext tls, OffLoopResolver resolver, int maxPending, ScriptBatch batch) {
    this.node = node;
    this.batch = batch;
    this.loop = loop;
    this.timeoutNanos = timeoutNanos;
    this.maxPending = maxPending;
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
        ch.pipeline().addLast(new RespDecoder(), new ReplyHandler(attempt));
      }
    };
  }

  boolean inLoop() {
    return loop.inEventLoop();
  }

  /** From any thread; the node timeout counts from here. */
  void submit(Call call) {
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
  void submitAll(List<Call> batch) {
    long deadline = System.nanoTime() + timeoutNanos;
    for (Call call : batch) {
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

  private void send(Call call) {
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
    watched.add(call);
    if (channel == null) {
      calls.add(call);
      armTimer();
      connect();
    } else if (!connected) {
      calls.add(call);
      armTimer();
    } else if (call.op() != null && batch.covers(call.op().script())) {
      hold(call);
      armTimer();
    } else {
      writeHeld(); // calls leave in the order made
      calls.add(call);
      armTimer();
      writeCall(call);
    }
  }

  private void hold(Call call) {
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
    Call call;
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
  private void writeCall(Call call) {
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
        List<Call> queued = new ArrayList<>(calls);
        calls.clear();
        long setupDeadline = System.nanoTime() + Math.max(timeoutNanos, FIRST_CONTACT_NANOS);
        for (List<String> command : node.handshake()) {
          if (attempt != generation) {
            break; // a write failed and dropped the connection
          }
          Call setup = new Call(command, null, true);
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
          Call identify = new Call(List.of("INFO", "server"), null, true);
          identify.result.whenComplete((reply, failure) -> {
            if (attempt == generation) {
              identified(reply, failure);
            }
          });
          sendSetup(identify, setupDeadline);
        }
        for (Call call : queued) {
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
  private void sendSetup(Call setup, long deadline) {
    setup.deadline = deadline;
    calls.add(setup);
    write(setup.command());
    expireAlone(setup);
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

  private void onReply(Object reply) {
    Call call = calls.poll();
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
        expireAlone(call);
        return;
      }
      node.noteRefusal(error);
      fail(call, error);
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
      fail(batched, new IllegalStateException("Redis node " + node.name() + " answered a batch of "
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

  private static void fail(Call call, Throwable failure) {
    if (call instanceof BatchCall batched) {
      batched.parts.forEach(part -> part.result.completeExceptionally(failure));
    } else {
      call.result.completeExceptionally(failure);
    }
  }

  /** Answered or timed out already: nothing is waiting for a retry. */
  private static boolean done(Call call) {
    if (call instanceof BatchCall batched) {
      return batched.parts.stream().allMatch(part -> part.result.isDone());
    }
    return call.result.isDone();
  }

  /** A retried call now sits behind younger ones, where the oldest-call timer would see it late. */
  private void expireAlone(Call call) {
    long left = call.deadline - System.nanoTime();
    loop.schedule(() -> fail(call, timeout()), Math.max(0, left), TimeUnit.NANOSECONDS);
  }

  /**
   * Runs the timer at the first deadline still watched, or at the stuck bound of the oldest
   * call. Usually already set early enough (deadlines come in order); not when it waits for
   * the stuck bound and a new call comes.
   */
  private void armTimer() {
    Call oldest = calls.peek();
    Call next = watched.peek();
    if (oldest == null && next == null) {
      return;
    }
    long now = System.nanoTime();
    // A call held for this pass's batch is watched before it is written.
    long at = oldest != null ? oldest.deadline + STUCK_NANOS : next.deadline;
    if (next != null && next.deadline - at < 0) {
      at = next.deadline;
    }
    at = Math.max(at, now + TICK_NANOS);
    if (timer != null) {
      if (timerAt - at <= TICK_NANOS) {
        return;
      }
      timer.cancel(false);
    }
    timerAt = at;
    timer = loop.schedule(this::checkDeadlines, at - now, TimeUnit.NANOSECONDS);
  }

  private void checkDeadlines() {
    timer = null;
    long now = System.nanoTime();
    Call call;
    while ((call = watched.peek()) != null && call.result.isDone()) {
      watched.poll();
    }
    if (call != null && call.deadline - now <= 0 && !readSinceDue) {
      // This loop may have been busy (or off the CPU) while the replies came in: they wait
      // unread in the socket until its next pass over the ready channels. One more pass first.
      readSinceDue = true;
      timerAt = now + TICK_NANOS;
      timer = loop.schedule(this::checkDeadlines, TICK_NANOS, TimeUnit.NANOSECONDS);
      return;
    }
    readSinceDue = false;
    while ((call = watched.peek()) != null && (call.result.isDone() || call.deadline - now <= 0)) {
      watched.poll();
      if (!call.result.isDone()) {
        call.result.completeExceptionally(timeout());
      }
    }
    Call oldest = calls.peek();
    if (oldest != null && now - oldest.deadline > STUCK_NANOS) {
      drop(new TimeoutException("Redis node " + node.name() + " has not answered for "
          + TimeUnit.NANOSECONDS.toMillis(now - oldest.deadline + timeoutNanos) + "ms"));
    } else {
      armTimer();
    }
  }

  /**
   * One per connection, without a stack trace: under overload every call on a node times out,
   * and a fresh exception with its stack per call was a sixth of what the server allocated in
   * a restart storm (docs/keepalive.md); where it was thrown says nothing the message does not.
   */
  private TimeoutException timeout() {
    if (timedOut == null) {
      timedOut = new NodeTimeoutException("Redis node " + node.name() + " did not answer within "
          + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + "ms");
    }
    return timedOut;
  }

  /** A node call's timeout, the same instance for every call on a connection: no stack trace, no suppressed ones. */
  private static final class NodeTimeoutException extends TimeoutException {
    NodeTimeoutException(String message) {
      super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
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
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
    readSinceDue = false;
    Throwable failure = cause instanceof TimeoutException
        ? cause
        : new NodeConnectionException("connection to Redis node " + node.name() + " failed: " + cause, cause);
    Call call;
    while ((call = calls.poll()) != null) {
      fail(call, failure);
    }
    held.forEach(c -> c.result.completeExceptionally(failure));
    held.clear();
    heldBytes = 0;
    watched.clear();
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

  /** The end of the channel's pipeline; each instance belongs to one connect attempt. */
  private final class ReplyHandler extends ChannelInboundHandlerAdapter {
    private final int attempt;

    ReplyHandler(int attempt) {
      this.attempt = attempt;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object reply) {
      if (attempt == generation) {
        onReply(reply);
      }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      if (event instanceof SslHandshakeCompletionEvent handshake && !handshake.isSuccess()
          && attempt == generation) {
        node.noteRefusal(handshake.cause());
        drop(handshake.cause());
      }
      ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (attempt == generation) {
        drop(new IOException("closed by the node"));
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (attempt == generation) {
        node.noteRefusal(cause);
        drop(cause);
      }
    }
  }
}
