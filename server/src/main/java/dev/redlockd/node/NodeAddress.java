package dev.redlockd.node;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where a node lives and how to log in: {@code redis://[user:password@]host:port[/db]} or
 * {@code rediss://...} for TLS. {@link #toString()} never shows the credentials.
 */
public record NodeAddress(
    String host, int port, boolean tls, Optional<String> user, Optional<String> password, int database) {

  public static final int DEFAULT_PORT = 6379;

  /** Parses a comma-separated list of node URIs; throws IllegalArgumentException with a one-line reason. */
  public static List<NodeAddress> parseList(String uris) {
    List<NodeAddress> nodes = new ArrayList<>();
    for (String part : uris.split(",")) {
      if (!part.isBlank()) {
        nodes.add(parse(part.strip()));
      }
    }
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("no Redis node given");
    }
    if (nodes.stream().map(NodeAddress::name).distinct().count() != nodes.size()) {
      throw new IllegalArgumentException("the same Redis node is named twice");
    }
    return List.copyOf(nodes);
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
    int database = 0;
    String path = uri.getPath();
    if (path != null && path.length() > 1) {
      try {
        database = Integer.parseInt(path.substring(1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("a Redis URI's path is a database number: " + redact(text));
      }
    }
    int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
    return new NodeAddress(uri.getHost(), port, "rediss".equals(scheme), user, password, database);
  }

  /** Percent-escapes only: in a URI's user-info a '+' is a plus, not a space (base64 passwords). */
  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  /** The text with everything up to the last '@' cut out, for error messages: passwords may hold '/' or '@'. */
  private static String redact(String text) {
    return text.replaceAll("//.*@", "//***@");
  }

  /** host:port, for logs. */
  public String name() {
    return host + ":" + port;
  }

  @Override
  public String toString() {
    return (tls ? "rediss://" : "redis://") + (password.isPresent() ? "***@" : "") + name()
        + (database == 0 ? "" : "/" + database);
  }
}
