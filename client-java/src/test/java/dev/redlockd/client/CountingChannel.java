package dev.redlockd.client;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A ManagedChannel that counts what the client asks of it: {@link #resetConnectBackoff()}, and
 * the calls it starts by method ("KeepAlive", "Campaign"), counted on the caller's thread, each
 * with how the client itself ended it (a fact of the client's, whatever the server saw first).
 */
final class CountingChannel extends ManagedChannel {
  private final ManagedChannel delegate;
  final AtomicInteger backoffResets = new AtomicInteger();
  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  private final Map<String, List<Set<String>>> ends = new ConcurrentHashMap<>();

  CountingChannel(ManagedChannel delegate) {
    this.delegate = delegate;
  }

  @Override
  public void resetConnectBackoff() {
    backoffResets.incrementAndGet();
    delegate.resetConnectBackoff();
  }

  /** The calls of this method (its bare name) started so far. */
  int calls(String method) {
    AtomicInteger n = calls.get(method);
    return n == null ? 0 : n.get();
  }

  /**
   * For each call of this method started so far, in order, how the client ended it:
   * {@code "cancelled"}, {@code "half-closed"}, both, or neither yet (empty).
   */
  List<Set<String>> ends(String method) {
    return List.copyOf(ends.getOrDefault(method, List.of()));
  }

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
    calls.computeIfAbsent(method.getBareMethodName(), m -> new AtomicInteger()).incrementAndGet();
    Set<String> end = ConcurrentHashMap.newKeySet();
    ends.computeIfAbsent(method.getBareMethodName(), m -> new CopyOnWriteArrayList<>()).add(end);
    return new ForwardingClientCall.SimpleForwardingClientCall<>(delegate.newCall(method, options)) {
      @Override
      public void cancel(String message, Throwable cause) {
        end.add("cancelled");
        super.cancel(message, cause);
      }

      @Override
      public void halfClose() {
        end.add("half-closed");
        super.halfClose();
      }
    };
  }

  @Override
  public String authority() {
    return delegate.authority();
  }

  @Override
  public ManagedChannel shutdown() {
    delegate.shutdown();
    return this;
  }

  @Override
  public boolean isShutdown() {
    return delegate.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public ManagedChannel shutdownNow() {
    delegate.shutdownNow();
    return this;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return delegate.awaitTermination(timeout, unit);
  }
}
