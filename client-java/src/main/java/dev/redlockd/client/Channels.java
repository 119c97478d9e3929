package dev.redlockd.client;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolverRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Channels to several redlockd replicas. The server keeps no state of its own (the leases are
 * in Redis), so any replica serves any call; with several of them behind one channel, calls are
 * spread over those that are up (gRPC's {@code round_robin}), and a KeepAlive or Campaign
 * stream that broke with its replica (a restart, a crash) is reopened on another one:
 *
 * <pre>{@code
 * ManagedChannel channel = Channels.forAddresses(List.of("10.0.0.1:50051", "10.0.0.2:50051"),
 *     InsecureChannelCredentials.create()).build();
 * LockClient locks = LockClient.create(channel);
 * }</pre>
 *
 * <p>A DNS name with one record per replica works the same way: {@code
 * Channels.forTarget("dns:///redlockd.internal:50051", credentials)}. The client never creates
 * or closes the channel: shut it down when done.
 *
 * <p>The channels made here ping a replica (HTTP/2 PING) while calls are open, so that a
 * connection to a host that went silent without closing it (frozen, powered off, cut off) is
 * closed and its calls fail over; the server permits it (its {@code --permit-keepalive-time},
 * 1 s by default). grpc-java pings at most every {@value #KEEPALIVE_SECONDS} s, whatever is
 * asked; a kept stream does not wait for that: it is superseded when it stays silent for a
 * quarter of its ttl. A ping that goes unanswered resets each stream on the connection
 * (NettyClientHandler's forceful close: RST_STREAM CANCEL, then the connection closed), never
 * half-closes one, so a replica that was only paused releases nothing when it wakes.
 */
public final class Channels {
  /** The name resolver scheme of a fixed list of addresses: {@code redlockd-static:///host:port,host:port}. */
  static final String SCHEME = "redlockd-static";
  /** The load balancing policy every channel made here starts with. */
  static final String LOAD_BALANCING_POLICY = "round_robin";
  /** How long a connection with calls open may stay quiet before it is pinged: grpc-java's floor. */
  static final long KEEPALIVE_SECONDS = 10;
  /** How long a ping may go unanswered before the connection is closed. */
  static final long KEEPALIVE_TIMEOUT_SECONDS = 1;

  private Channels() {}

  /**
   * A channel builder over these replicas ({@code host:port} each; IPv6 as {@code [addr]:port};
   * a host name may have several addresses), round_robin over them.
   */
  public static ManagedChannelBuilder<?> forAddresses(List<String> addresses, ChannelCredentials credentials) {
    return forTarget(target(addresses), credentials);
  }

  /** {@link #forAddresses(List, ChannelCredentials)} from a comma-separated list, as a command line gives it. */
  public static ManagedChannelBuilder<?> forAddresses(String commaSeparated, ChannelCredentials credentials) {
    return forAddresses(split(commaSeparated), credentials);
  }

  /** A channel builder for any gRPC target (e.g. {@code dns:///name:port}), round_robin over what it resolves to. */
  public static ManagedChannelBuilder<?> forTarget(String target, ChannelCredentials credentials) {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(credentials, "credentials");
    register();
    return Grpc.newChannelBuilder(target, credentials)
        .defaultLoadBalancingPolicy(LOAD_BALANCING_POLICY)
        .keepAliveTime(KEEPALIVE_SECONDS, TimeUnit.SECONDS)
        .keepAliveTimeout(KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        .keepAliveWithoutCalls(false);
  }

  /** The {@value #SCHEME} target naming these addresses. */
  static String target(List<String> addresses) {
    Objects.requireNonNull(addresses, "addresses");
    if (addresses.isEmpty()) {
      throw new IllegalArgumentException("no server address");
    }
    StringBuilder target = new StringBuilder(SCHEME).append(":///");
    for (int i = 0; i < addresses.size(); i++) {
      String address = addresses.get(i).trim();
      StaticAddressResolverProvider.HostPort.parse(address, 443); // fails early on a malformed one
      if (i > 0) {
        target.append(',');
      }
      // '[' and ']' may not appear in a URI's path: IPv6 literals are percent-encoded.
      target.append(address.replace("[", "%5B").replace("]", "%5D"));
    }
    return target.toString();
  }

  static List<String> split(String commaSeparated) {
    List<String> addresses = new ArrayList<>();
    for (String one : commaSeparated.split(",")) {
      if (!one.isBlank()) {
        addresses.add(one.trim());
      }
    }
    return addresses;
  }

  /**
   * The provider is also listed in META-INF/services; registering it here as well keeps this
   * class working where that file was lost (a fat jar that merges them badly).
   */
  private static synchronized void register() {
    NameResolverRegistry registry = NameResolverRegistry.getDefaultRegistry();
    if (registry.getProviderForScheme(SCHEME) == null) {
      registry.register(new StaticAddressResolverProvider());
    }
  }
}
