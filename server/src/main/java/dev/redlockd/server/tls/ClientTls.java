package dev.redlockd.server.tls;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.net.Socket;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/** How a client of the gRPC port (the healthcheck subcommand) connects: plaintext, TLS, or mutual TLS. */
public final class ClientTls {
  private ClientTls() {}

  /**
   * Plaintext when neither {@code ca} nor {@code serverCert} is given. With {@code ca}: TLS,
   * trusting the authorities in that bundle, and the server's certificate must name the host
   * dialled. Else with {@code serverCert} (the server's own --tls-cert): TLS, trusting exactly
   * that certificate, whatever name it carries (a health check dials 127.0.0.1, which a
   * certificate seldom names). {@code clientCert} and {@code clientKey} add a client certificate
   * for mutual TLS. Throws IllegalArgumentException with a one-line reason naming the flag.
   */
  public static ChannelCredentials credentials(Optional<Path> serverCert, Optional<Path> ca,
      Optional<Path> clientCert, Optional<Path> clientKey) {
    if (clientCert.isPresent() != clientKey.isPresent()) {
      throw new IllegalArgumentException(clientCert.isPresent()
          ? "--tls-client-cert needs --tls-client-key (its private key)"
          : "--tls-client-key needs --tls-client-cert (the certificate chain it belongs to)");
    }
    if (ca.isEmpty() && serverCert.isEmpty()) {
      if (clientCert.isPresent()) {
        throw new IllegalArgumentException("--tls-client-cert needs --tls-ca or --tls-cert: a client certificate "
            + "is shown only over TLS");
      }
      return InsecureChannelCredentials.create();
    }
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
    if (ca.isPresent()) {
      tls.trustManager(KeyMaterial.trust("--tls-ca", ca.get()));
    } else {
      tls.trustManager(new Pinned(PemFiles.certificates("--tls-cert", serverCert.get()).get(0)));
    }
    clientCert.ifPresent(cert -> tls.keyManager(
        KeyMaterial.identity("--tls-client-cert", cert, "--tls-client-key", clientKey.get())));
    return tls.build();
  }

  /** Trusts a server that shows exactly this leaf certificate, and nothing else; checks no host name. */
  private static final class Pinned extends X509ExtendedTrustManager {
    private final X509Certificate leaf;

    Pinned(X509Certificate leaf) {
      this.leaf = leaf;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      if (chain == null || chain.length == 0 || !chain[0].equals(leaf)) {
        throw new CertificateException("the server's certificate is not the one in --tls-cert ("
            + leaf.getSubjectX500Principal() + ")");
      }
      chain[0].checkValidity();
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      throw new CertificateException("a client's trust manager checks no clients");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return List.of(leaf).toArray(X509Certificate[]::new);
    }
  }
}
