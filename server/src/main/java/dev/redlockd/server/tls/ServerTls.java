package dev.redlockd.server.tls;

import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import java.nio.file.Path;
import java.util.Optional;

/** How the gRPC port is secured: plaintext, TLS, or mutual TLS. */
public final class ServerTls {
  private ServerTls() {}

  /**
   * Plaintext when no certificate is given; TLS with {@code cert} and {@code key}; and with
   * {@code clientCa} too, mutual TLS: only clients presenting a certificate signed by one of its
   * authorities complete the handshake. Throws IllegalArgumentException with a one-line reason
   * for a missing pair or a file that cannot be used.
   */
  public static ServerCredentials credentials(Optional<Path> cert, Optional<Path> key, Optional<Path> clientCa) {
    if (cert.isPresent() != key.isPresent()) {
      throw new IllegalArgumentException(cert.isPresent() ? "--tls-cert needs --tls-key (its private key)"
          : "--tls-key needs --tls-cert (the certificate chain it belongs to)");
    }
    if (clientCa.isPresent() && cert.isEmpty()) {
      throw new IllegalArgumentException("--tls-client-ca needs --tls-cert and --tls-key: mutual TLS is TLS "
          + "with client certificates");
    }
    if (cert.isEmpty()) {
      return InsecureServerCredentials.create();
    }
    TlsServerCredentials.Builder tls = TlsServerCredentials.newBuilder()
        .keyManager(KeyMaterial.identity("--tls-cert", cert.get(), "--tls-key", key.get()));
    clientCa.ifPresent(ca -> tls
        .trustManager(KeyMaterial.trust("--tls-client-ca", ca))
        .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE));
    return tls.build();
  }

  /** For the start-up log: what a client must bring. */
  public static String describe(Optional<Path> cert, Optional<Path> clientCa) {
    if (cert.isEmpty()) {
      return "plaintext (no --tls-cert)";
    }
    return clientCa.map(ca -> "mutual TLS: certificate " + cert.get() + ", clients need a certificate signed by "
            + "an authority in " + ca)
        .orElseGet(() -> "TLS: certificate " + cert.get() + ", no client certificates asked for");
  }
}
