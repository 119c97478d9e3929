package dev.redlockd.node;

import io.netty.resolver.AddressResolver;
import io.netty.resolver.AddressResolverGroup;
import io.netty.resolver.InetNameResolver;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Resolves a node's host name on threads of its own, never on an event loop. Netty's default
 * resolver calls {@link InetAddress#getAllByName} on the loop that connects, and that loop
 * serves gRPC calls: a slow or unreachable DNS server would stall every call on it. The JVM's
 * resolver is kept (hosts file, nsswitch, its cache), only moved off the loop.
 */
final class OffLoopResolver extends AddressResolverGroup<InetSocketAddress> {
  /** Lookups happen on (re)connect only; two threads keep one hung lookup from holding the rest. */
  private static final OffLoopResolver SHARED = new OffLoopResolver(InetAddress::getAllByName,
      Executors.newFixedThreadPool(2, new DefaultThreadFactory("redlockd-resolver", true)));

  /** The blocking lookup, replaceable in tests. */
  interface Lookup {
    InetAddress[] all(String host) throws Exception;
  }

  private final Lookup lookup;
  private final Executor blocking;

  OffLoopResolver(Lookup lookup, Executor blocking) {
    this.lookup = lookup;
    this.blocking = blocking;
  }

  static OffLoopResolver shared() {
    return SHARED;
  }

  @Override
  protected AddressResolver<InetSocketAddress> newResolver(EventExecutor loop) {
    return new InetNameResolver(loop) {
      @Override
      protected void doResolve(String host, Promise<InetAddress> promise) {
        blocking.execute(() -> {
          try {
            promise.trySuccess(lookup.all(host)[0]);
          } catch (Exception e) {
            promise.tryFailure(e);
          }
        });
      }

      @Override
      protected void doResolveAll(String host, Promise<List<InetAddress>> promise) {
        blocking.execute(() -> {
          try {
            promise.trySuccess(Arrays.asList(lookup.all(host)));
          } catch (Exception e) {
            promise.tryFailure(e);
          }
        });
      }
    }.asAddressResolver();
  }
}
