package dev.redlockd.server.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redlockd.testing.TestCertificates;
import dev.redlockd.testing.TestCertificates.Authority;
import dev.redlockd.testing.TestCertificates.Issued;
import io.grpc.InsecureServerCredentials;
import io.grpc.TlsServerCredentials;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the TLS flags accept, and the one-line reason for each file they refuse. */
class TlsFilesTest {
  @TempDir
  static Path dir;
  private static Authority ca;
  private static Issued server;

  @BeforeAll
  static void certificates() {
    ca = TestCertificates.authority(dir, "test CA");
    server = ca.issue("localhost", "127.0.0.1", "localhost");
  }

  private static Optional<Path> some(Path p) {
    return Optional.of(p);
  }

  private static void refusedWith(Runnable setup, String... parts) {
    assertThatThrownBy(setup::run)
        .isInstanceOf(IllegalArgumentException.class)
        .satisfies(e -> assertThat(e.getMessage()).contains(parts).doesNotContain("\n"));
  }

  @Test
  void noCertificateMeansPlaintext() {
    assertThat(ServerTls.credentials(Optional.empty(), Optional.empty(), Optional.empty()))
        .isInstanceOf(InsecureServerCredentials.class);
  }

  @Test
  void certificateAndKeyMeanTlsAndAClientCaMeansClientCertificatesRequired() {
    TlsServerCredentials tls = (TlsServerCredentials) ServerTls.credentials(some(server.cert()), some(server.key()),
        Optional.empty());
    assertThat(tls.getClientAuth()).isEqualTo(TlsServerCredentials.ClientAuth.NONE);
    assertThat(tls.getKeyManagers()).isNotEmpty();
    TlsServerCredentials mutual = (TlsServerCredentials) ServerTls.credentials(some(server.cert()),
        some(server.key()), some(ca.cert()));
    assertThat(mutual.getClientAuth()).isEqualTo(TlsServerCredentials.ClientAuth.REQUIRE);
    assertThat(mutual.getTrustManagers()).isNotEmpty();
  }

  @Test
  void aChainWithItsAuthorityAndAnRsaKeyAreAccepted() {
    Issued rsa = ca.issueRsa("localhost", "localhost");
    Path chain = TestCertificates.concat(dir.resolve("chain.pem"), rsa.cert(), ca.cert());
    assertThat(ServerTls.credentials(some(chain), some(rsa.key()), Optional.empty()))
        .isInstanceOf(TlsServerCredentials.class);
  }

  @Test
  void halfAPairIsRefused() {
    refusedWith(() -> ServerTls.credentials(some(server.cert()), Optional.empty(), Optional.empty()),
        "--tls-cert needs --tls-key");
    refusedWith(() -> ServerTls.credentials(Optional.empty(), some(server.key()), Optional.empty()),
        "--tls-key needs --tls-cert");
    refusedWith(() -> ServerTls.credentials(Optional.empty(), Optional.empty(), some(ca.cert())),
        "--tls-client-ca needs --tls-cert");
    refusedWith(() -> RedisTls.context(Optional.empty(), some(server.cert()), Optional.empty()),
        "--redis-tls-cert needs --redis-tls-key");
    refusedWith(() -> RedisTls.context(Optional.empty(), Optional.empty(), some(server.key())),
        "--redis-tls-key needs --redis-tls-cert");
  }

  @Test
  void missingOrUnreadableFilesAreRefusedByName() {
    Path missing = dir.resolve("nope.pem");
    refusedWith(() -> ServerTls.credentials(some(missing), some(server.key()), Optional.empty()),
        "--tls-cert", "no such file", missing.toString());
    refusedWith(() -> ServerTls.credentials(some(server.cert()), some(dir), Optional.empty()),
        "--tls-key", "cannot read", dir.toString());
    refusedWith(() -> RedisTls.context(some(missing), Optional.empty(), Optional.empty()),
        "--redis-tls-ca", "no such file");
  }

  @Test
  void filesWithTheWrongContentAreRefusedWithWhatIsWrong() throws Exception {
    Path garbage = Files.writeString(dir.resolve("garbage.pem"), "not a certificate\n");
    refusedWith(() -> ServerTls.credentials(some(garbage), some(server.key()), Optional.empty()),
        "--tls-cert", "holds no PEM certificate");
    refusedWith(() -> ServerTls.credentials(some(server.cert()), some(server.key()), some(garbage)),
        "--tls-client-ca", "holds no PEM certificate");
    // The certificate where the key should be.
    refusedWith(() -> ServerTls.credentials(some(server.cert()), some(server.cert()), Optional.empty()),
        "--tls-key", "no PEM private key");
    Path broken = Files.writeString(dir.resolve("broken.pem"),
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    refusedWith(() -> ServerTls.credentials(some(broken), some(server.key()), Optional.empty()),
        "--tls-cert", "not a valid X.509 certificate");
  }

  @Test
  void anOlderFormOfKeyIsRefusedWithTheCommandThatConvertsIt() {
    Issued rsa = ca.issueRsa("localhost", "localhost");
    Path legacy = TestCertificates.writeLegacyKey(rsa.privateKey(), dir.resolve("legacy.key"));
    refusedWith(() -> ServerTls.credentials(some(rsa.cert()), some(legacy), Optional.empty()),
        "--tls-key", "PKCS#1", "openssl pkcs8 -topk8 -nocrypt");
  }

  @Test
  void aKeyOfAnotherCertificateIsRefused() {
    Issued other = ca.issue("other", "localhost");
    refusedWith(() -> ServerTls.credentials(some(server.cert()), some(other.key()), Optional.empty()),
        "--tls-key", "is not the private key of the certificate in", server.cert().toString());
    Issued rsa = ca.issueRsa("rsa", "localhost");
    refusedWith(() -> RedisTls.context(Optional.empty(), some(server.cert()), some(rsa.key())),
        "--redis-tls-key", "is not the private key");
  }

  @Test
  void anExpiredCertificateIsRefused() {
    Issued expired = ca.issueExpired("localhost", "localhost");
    refusedWith(() -> ServerTls.credentials(some(expired.cert()), some(expired.key()), Optional.empty()),
        "--tls-cert", "expired on");
  }

  @Test
  void redisTlsNeedsNothingButMayTrustACaAndShowACertificate() {
    assertThat(RedisTls.context(Optional.empty(), Optional.empty(), Optional.empty())).isEmpty();
    assertThat(RedisTls.context(some(ca.cert()), Optional.empty(), Optional.empty())).isPresent();
    assertThat(RedisTls.context(some(ca.cert()), some(server.cert()), some(server.key()))).isPresent();
  }
}
