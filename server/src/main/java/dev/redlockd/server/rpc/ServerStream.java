package dev.redlockd.server.rpc;

import dev.redlockd.server.access.Quotas;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;

/**
 * The response side of one open stream (KeepAlive, Campaign, Observe), ended exactly once: by
 * the server with a status, or by the client going away. The lock is the stream object itself,
 * so a subclass that checks {@link #finished()} inside its own {@code synchronized (this)} sees
 * no end slip in between.
 */
abstract class ServerStream<R> implements OpenStreams.OpenStream {
  private final OpenStreams registry;
  private final ServerCallStreamObserver<R> call;
  /** The registry's meter, also marking the call's span (jeopardy, loss, return to HELD) when traced. */
  private final dev.redlockd.server.metrics.LeaseMeter leases;
  /** Given back when the stream ends, however it ends (its caller's share of streams). */
  private volatile Quotas.Slot slot;
  /** The response side is closed (or the client went away): nothing more is sent. */
  private boolean finished; // guarded by this
  /** What {@link #sendLatest} keeps for when the client reads again. */
  private R latest; // guarded by this

  /** Called while the call is being started (setting handlers is allowed then only). */
  ServerStream(OpenStreams registry, ServerCallStreamObserver<R> call) {
    this.registry = registry;
    this.call = call;
    this.leases = dev.redlockd.server.tracing.CallSpan.current().marking(registry.leases());
    call.setOnCancelHandler(this::clientGone);
    call.setOnReadyHandler(this::sendPending);
  }

  /** Counts the renewals and losses of what this stream keeps. */
  protected final dev.redlockd.server.metrics.LeaseMeter leases() {
    return leases;
  }

  protected final synchronized boolean finished() {
    return finished;
  }

  /** Sends unless the stream has ended or the client has gone. */
  protected final synchronized void send(R message) {
    if (!finished && !call.isCancelled()) {
      call.onNext(message);
    }
  }

  /**
   * For a stream of states, each one superseding the last: sent at once while the client keeps
   * up; when it does not (flow control says the transport is not ready), only the latest waits,
   * and goes out when the client reads again. Memory per slow client stays one message, and the
   * caller's thread never waits for it.
   */
  protected final synchronized void sendLatest(R message) {
    latest = message;
    sendPending();
  }

  private synchronized void sendPending() {
    if (latest != null && !finished && !call.isCancelled() && call.isReady()) {
      R message = latest;
      latest = null;
      call.onNext(message);
    }
  }

  /** The client cancelled or disconnected: nothing more is sent, then {@link #abandoned()} cleans up. */
  protected final void clientGone() {
    synchronized (this) {
      finished = true;
    }
    abandoned();
    closed();
  }

  /** The caller's slot for this stream, given back when it ends. */
  final void holdUntilEnd(Quotas.Slot streamSlot) {
    slot = streamSlot;
  }

  private void closed() {
    registry.closed(this);
    Quotas.Slot s = slot;
    if (s != null) {
      s.close();
    }
  }

  /** What the stream held when its client went away, given up. */
  protected abstract void abandoned();

  /** Ends the stream with this status, once; later calls do nothing. */
  final void end(Status status) {
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
      if (!call.isCancelled()) {
        if (status.isOk()) {
          call.onCompleted();
        } else {
          call.onError(status.asRuntimeException());
        }
      }
    }
    closed();
  }
}
