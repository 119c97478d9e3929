package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Attributes;
import io.grpc.Grpc;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.Test;

/**
 * How a caller is named in audit lines. The TLS session is a stand-in (the attributes are what
 * grpc-java's Netty transport sets); the certificate is a real one.
 */
class CallerInterceptorTest {
  private static final InetSocketAddress PEER = new InetSocketAddress("10.0.0.7", 53412);

  @Test
  void aPlaintextCallIsNamedByItsPeerAddress() {
    Attributes attributes = Attributes.newBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, PEER).build();
    assertThat(CallerInterceptor.describe(attributes)).isEqualTo("/10.0.0.7:53412");
  }

  @Test
  void aMutualTlsCallAlsoNamesItsCertificatesSubject() throws Exception {
    Certificate cert;
    try (InputStream pem = getClass().getResourceAsStream("ops-client.pem")) {
      cert = CertificateFactory.getInstance("X.509").generateCertificate(pem);
    }
    Attributes attributes = Attributes.newBuilder()
        .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, PEER)
        .set(Grpc.TRANSPORT_ATTR_SSL_SESSION, session(new Certificate[] {cert}))
        .build();
    assertThat(CallerInterceptor.describe(attributes))
        .isEqualTo("/10.0.0.7:53412 (TLS subject CN=ops-1,O=redlockd tests)");
  }

  @Test
  void tlsWithoutAClientCertificateIsNamedByAddressOnly() {
    Attributes attributes = Attributes.newBuilder()
        .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, PEER)
        .set(Grpc.TRANSPORT_ATTR_SSL_SESSION, session(null))
        .build();
    assertThat(CallerInterceptor.describe(attributes)).isEqualTo("/10.0.0.7:53412");
  }

  @Test
  void noAttributesIsAnUnknownPeer() {
    assertThat(CallerInterceptor.describe(null)).isEqualTo("an unknown peer");
    assertThat(CallerInterceptor.describe(Attributes.EMPTY)).isEqualTo("an unknown peer");
  }

  /** A session whose peer presented {@code chain}; null: no client certificate. */
  private static SSLSession session(Certificate[] chain) {
    return (SSLSession) Proxy.newProxyInstance(SSLSession.class.getClassLoader(), new Class<?>[] {SSLSession.class},
        (proxy, method, args) -> {
          if (method.getName().equals("getPeerCertificates")) {
            if (chain == null) {
              throw new SSLPeerUnverifiedException("peer not authenticated");
            }
            return chain;
          }
          throw new UnsupportedOperationException(method.getName());
        });
  }
}
