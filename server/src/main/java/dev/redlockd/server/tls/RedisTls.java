package dev.redlockd.server.tls;

import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Optional;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/** The TLS side of the connections to {@code rediss://} nodes. */
public final class RedisTls {
  private RedisTls() {}

  /**
   * TLS that trusts the authorities in {@code ca} (else the JVM's default ones) and, given
   * {@code cert} and {@code key}, present that client certificate (Redis asks for one unless
   * {@code tls-auth-clients no}). Empty when nothing is configured: the JVM defaults apply.
   * Throws IllegalArgumentException with a one-line reason.
   */
  public static Optional<SSLContext> context(Optional<Path> ca, Optional<Path> cert,
      Optional<Path> key) {
    if (cert.isPresent() != key.isPresent()) {
      throw new IllegalArgumentException(cert.isPresent()
          ? "--redis-tls-cert needs --redis-tls-key (its private key)"
          : "--redis-tls-key needs --redis-tls-cert (the client certificate it belongs to)");
    }
    if (ca.isEmpty() && cert.isEmpty()) {
      return Optional.empty();
    }
    KeyManager[] identity = cert.isPresent()
        ? KeyMaterial.identity("--redis-tls-cert", cert.get(), "--redis-tls-key", key.get())
        : null;
    TrustManager[] trust = ca.map(file -> KeyMaterial.trust("--redis-tls-ca", file)).orElse(null);
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(identity, trust, null); // null: the JVM's default for that part
      return Optional.of(context);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot set up TLS to the Redis nodes (" + e.getMessage() + ")");
    }
  }
}
