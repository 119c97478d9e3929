package dev.redlockd.node;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a node lives and how to log in: {@code redis://[user:password@]host:port} or
 * {@code rediss://...} for TLS, optionally after {@code id=}, the node's stable id. Which
 * nodes a resource lives on is computed from the ids, so an id must stay with its node: a
 * node given without one is known by its host:port (port 6379 when none is written), and
 * writing its address another way, or moving it, moves resources. {@link #toString()} never
 * shows the credentials.
 *
 * <p>Always database 0: release notices go over pub/sub, which Redis does not scope by database,
 * so another database number would isolate nothing; a URI that names one is refused rather
 * than half-honoured.
 */
public record NodeAddress(
    String host, int port, boolean tls, Optional<String> user, Optional<String> password, String id) {

  public static final int DEFAULT_PORT = 6379;

  /** {@code id=} before a URI: letters, digits, '.', '_' and '-', up to 64. */
  private static final Pattern NAMED = Pattern.compile("([A-Za-z0-9][A-Za-z0-9._-]{0,63})=(rediss?://.*)",
      Pattern.DOTALL);
  /** Something that looks meant as {@code id=} (an '=' before any "://"), whatever follows. */
  private static final Pattern LOOKS_NAMED = Pattern.compile("[^/@:]*=.*");

  /** A node known by its host:port. */
  public NodeAddress(String host, int port, boolean tls, Optional<String> user, Optional<String> password) {
    this(host, port, tls, user, password, host + ":" + port);
  }

  /** Parses a comma-separated list of node URIs; throws IllegalArgumentException with a one-line reason. */
  public static List<NodeAddress> parseList(String uris) {
    if (uris.isBlank()) {
      throw new IllegalArgumentException("no Redis node given");
    }
    List<NodeAddress> nodes = new ArrayList<>();
    String[] parts = uris.split(",", -1); // -1: a trailing comma is an empty entry too
    for (int i = 0; i < parts.length; i++) {
      if (parts[i].isBlank()) {
        // Most likely a node that a template or an unset variable left out: N would silently be one less.
        throw new IllegalArgumentException("entry " + (i + 1) + " of " + parts.length
            + " is empty (two commas in a row, or one at an end)");
      }
      nodes.add(parseEntry(parts[i].strip()));
    }
    if (nodes.stream().map(NodeAddress::name).distinct().count() != nodes.size()) {
      throw new IllegalArgumentException("the same Redis node is named twice");
    }
    Set<String> ids = new HashSet<>();
    for (NodeAddress node : nodes) {
      if (!ids.add(node.id())) {
        throw new IllegalArgumentException("node id '" + node.id() + "' is given twice: each node needs its own");
      }
    }
    return List.copyOf(nodes);
  }

  /** One entry of a list: a URI, or {@code id=} and a URI. */
  static NodeAddress parseEntry(String text) {
    Matcher named = NAMED.matcher(text);
    if (named.matches()) {
      NodeAddress a = parse(named.group(2));
      return new NodeAddress(a.host, a.port, a.tls, a.user, a.password, named.group(1));
    }
    if (LOOKS_NAMED.matcher(text).matches()) {
      // Not echoed past the '=': the rest may carry a password.
      throw new IllegalArgumentException("a node id (before '=') is 1 to 64 letters, digits, '.', '_' or '-', "
          + "starting with a letter or digit, followed by redis:// or rediss://");
    }
    return parse(text);
  }

  public static NodeAddress parse(String text) {
    URI uri;
    try {
      uri = new URI(text);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("not a Redis URI: " + redact(text));
    }
    String scheme = uri.getScheme();
    if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
      throw new IllegalArgumentException(
          "a Redis URI starts with redis:// or rediss://, not: " + redact(text));
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("a Redis URI needs a host: " + redact(text));
    }
    Optional<String> user = Optional.empty();
    Optional<String> password = Optional.empty();
    String userInfo = uri.getRawUserInfo();
    if (userInfo != null && !userInfo.isEmpty()) {
      int colon = userInfo.indexOf(':');
      if (colon < 0) {
        // redis://secret@host is the common password-only form.
        password = Optional.of(decode(userInfo));
      } else {
        String u = decode(userInfo.substring(0, colon));
        user = u.isEmpty() ? Optional.empty() : Optional.of(u);
        password = Optional.of(decode(userInfo.substring(colon + 1)));
      }
    }
    int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
    boolean tls = "rediss".equals(scheme);
    String shown = new NodeAddress(uri.getHost(), port, tls, user, password).toString();
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is out of range 1..65535: " + shown);
    }
    String path = uri.getRawPath();
    if (path != null && !path.isEmpty() && !path.equals("/") && !path.equals("/0")) {
      throw new IllegalArgumentException("redlockd uses database 0 only (release notices go over pub/sub, "
          + "which is not scoped by database, so another one would isolate nothing): remove "
          // A path that is not a number may be the tail of a password with a '/' in it: not echoed.
          + (path.matches("/\\d{1,9}") ? "'" + path + "'" : "the path") + " from " + shown
          + "; give each deployment its own --key-prefix instead");
    }
    if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
      // Not echoed: a query may carry a password (?password=...).
      throw new IllegalArgumentException("a Redis URI takes no query parameters (?...) or fragment (#...), "
          + "they would be ignored: " + shown + (uri.getRawQuery() != null ? "?..." : "#..."));
    }
    return new NodeAddress(uri.getHost(), port, tls, user, password);
  }

  /** Percent-escapes only: in a URI's user-info a '+' is a plus, not a space (base64 passwords). */
  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  /** The text with everything up to the last '@' cut out, for error messages: passwords may hold '/' or '@'. */
  private static String redact(String text) {
    return text.replaceAll("//.*@", "//***@");
  }

  /** Whether the list gave this node an id ({@code id=redis://...}) rather than leaving it known by its address. */
  public boolean named() {
    return !id.equals(name());
  }

  /** host:port, for logs. */
  public String name() {
    return host + ":" + port;
  }

  @Override
  public String toString() {
    return (named() ? id + "=" : "") + (tls ? "rediss://" : "redis://")
        + (password.isPresent() ? "***@" : "") + name();
  }
}
