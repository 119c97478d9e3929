package dev.redlockd.client;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A ManagedChannel that counts what the client asks of it: {@link #resetConnectBackoff()}, and
 * the calls it starts by method ("KeepAlive", "Campaign"), counted on the caller's thread.
 */
final class CountingChannel extends ManagedChannel {
  private final ManagedChannel delegate;
  final AtomicInteger backoffResets = new AtomicInteger();
  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

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

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
    calls.computeIfAbsent(method.getBareMethodName(), m -> new AtomicInteger()).incrementAndGet();
    return delegate.newCall(method, options);
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
