package dev.redlockd.client;

import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import io.grpc.StatusOr;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * The {@value Channels#SCHEME} name resolver: a fixed list of server addresses, {@code
 * redlockd-static:///host1:port1,host2:port2}, each host name looked up again on every
 * resolution (a name with several addresses gives all of them). With round_robin, as
 * {@link Channels} sets it, every call goes to the next replica that is up, so a stream that
 * broke with its replica is reopened on another one.
 */
public final class StaticAddressResolverProvider extends NameResolverProvider {
  @Override
  protected boolean isAvailable() {
    return true;
  }

  @Override
  protected int priority() {
    return 5;
  }

  @Override
  public String getDefaultScheme() {
    return Channels.SCHEME;
  }

  @Override
  public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
    return List.of(InetSocketAddress.class);
  }

  @Override
  public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
    if (!Channels.SCHEME.equals(targetUri.getScheme())) {
      return null;
    }
    String path = targetUri.getPath();
    if (path == null || path.length() < 2) {
      throw new IllegalArgumentException("no address in " + targetUri + " (expected "
          + Channels.SCHEME + ":///host:port[,host:port...])");
    }
    List<HostPort> addresses = new ArrayList<>();
    for (String one : path.substring(1).split(",")) {
      if (!one.isBlank()) {
        addresses.add(HostPort.parse(one.trim(), args.getDefaultPort()));
      }
    }
    if (addresses.isEmpty()) {
      throw new IllegalArgumentException("no address in " + targetUri);
    }
    return new Resolver(addresses, args);
  }

  /** One address of the list: a host name or IP literal, and a port. */
  record HostPort(String host, int port) {
    static HostPort parse(String address, int defaultPort) {
      String host;
      String port = null;
      if (address.startsWith("[")) {
        int close = address.indexOf(']');
        if (close < 0) {
          throw new IllegalArgumentException("unclosed '[' in address " + address);
        }
        host = address.substring(1, close);
        if (close + 1 < address.length()) {
          if (address.charAt(close + 1) != ':') {
            throw new IllegalArgumentException("expected ':' after ']' in address " + address);
          }
          port = address.substring(close + 2);
        }
      } else {
        int colon = address.lastIndexOf(':');
        if (colon >= 0 && address.indexOf(':') != colon) {
          throw new IllegalArgumentException("an IPv6 address needs brackets: [" + address + "]:port");
        }
        host = colon < 0 ? address : address.substring(0, colon);
        port = colon < 0 ? null : address.substring(colon + 1);
      }
      if (host.isEmpty()) {
        throw new IllegalArgumentException("no host in address " + address);
      }
      int p;
      try {
        p = port == null ? defaultPort : Integer.parseInt(port);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("bad port in address " + address, e);
      }
      if (p <= 0 || p > 65535) {
        throw new IllegalArgumentException("bad port in address " + address);
      }
      return new HostPort(host, p);
    }

    /** As an authority: host:port, IPv6 in brackets. */
    String authority() {
      return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
  }

  private static final class Resolver extends NameResolver {
    private final List<HostPort> addresses;
    private final Args args;
    private Listener2 listener; // in the synchronization context
    private boolean resolving; // in the synchronization context
    private boolean shutdown; // in the synchronization context

    Resolver(List<HostPort> addresses, Args args) {
      this.addresses = List.copyOf(addresses);
      this.args = args;
    }

    @Override
    public String getServiceAuthority() {
      return addresses.get(0).authority();
    }

    @Override
    public void start(Listener2 listener) {
      this.listener = listener;
      resolve();
    }

    @Override
    public void refresh() {
      resolve();
    }

    private void resolve() {
      if (resolving || shutdown) {
        return;
      }
      resolving = true;
      Executor executor = args.getOffloadExecutor();
      Runnable lookUp = () -> {
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        for (HostPort address : addresses) {
          try {
            for (InetAddress ip : InetAddress.getAllByName(address.host())) {
              groups.add(new EquivalentAddressGroup(new InetSocketAddress(ip, address.port())));
            }
          } catch (UnknownHostException e) {
            unknown.add(address.authority());
          }
        }
        args.getSynchronizationContext().execute(() -> {
          resolving = false;
          if (shutdown) {
            return;
          }
          if (groups.isEmpty()) {
            listener.onError(Status.UNAVAILABLE.withDescription("no address resolved: " + unknown));
          } else {
            listener.onResult(ResolutionResult.newBuilder().setAddressesOrError(StatusOr.fromValue(groups))
                .setAttributes(Attributes.EMPTY).build());
          }
        });
      };
      if (executor != null) {
        executor.execute(lookUp);
      } else {
        lookUp.run();
      }
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }
  }
}
