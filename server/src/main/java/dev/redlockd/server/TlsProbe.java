package dev.redlockd.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509TrustManager;

/**
 * Whether a port speaks TLS: a plaintext health check against a TLS server sees only "Network
 * closed for unknown reason", which names neither TLS nor the flag that would fix it. A TLS
 * server shows its certificate before it asks anything of the client, so a handshake that gets
 * that far answers the question, whatever the server then thinks of this client.
 */
final class TlsProbe {
  private TlsProbe() {}

  /** True when the server at host:port sent a TLS certificate within the timeout. */
  static boolean speaksTls(String host, int port, Duration timeout) {
    AtomicBoolean certificateSeen = new AtomicBoolean();
    X509TrustManager noteOnly = new X509TrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType) {
        certificateSeen.set(true); // trusts nothing: nothing is sent over this connection
      }

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
      }
    };
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    try (Socket plain = new Socket()) {
      plain.connect(new InetSocketAddress(host, port), millis);
      plain.setSoTimeout(millis);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, new X509TrustManager[] {noteOnly}, null);
      try (SSLSocket tls = (SSLSocket) context.getSocketFactory().createSocket(plain, host, port, false)) {
        tls.startHandshake();
      }
    } catch (IOException | GeneralSecurityException e) {
      // A refused client certificate, a reset: the certificate, if any, was seen before.
    }
    return certificateSeen.get();
  }
}
