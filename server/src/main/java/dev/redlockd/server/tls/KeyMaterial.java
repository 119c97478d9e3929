package dev.redlockd.server.tls;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/** JSSE key and trust managers built from PEM files, checked as far as can be before a peer shows up. */
final class KeyMaterial {
  /** The in-memory key store never leaves this class: its password guards nothing. */
  private static final char[] NO_PASSWORD = new char[0];

  private KeyMaterial() {}

  /**
   * Our identity: the certificate chain (leaf first) and its private key. A key that does not
   * belong to the leaf, or a leaf outside its validity period, would only show up as failed
   * handshakes later, so both stop start-up here.
   */
  static KeyManager[] identity(String certFlag, Path certFile, String keyFlag, Path keyFile) {
    List<X509Certificate> chain = PemFiles.certificates(certFlag, certFile);
    PrivateKey key = PemFiles.privateKey(keyFlag, keyFile);
    X509Certificate leaf = chain.get(0);
    try {
      leaf.checkValidity();
    } catch (CertificateExpiredException e) {
      throw new IllegalArgumentException(certFlag + ": the certificate in " + certFile + " expired on "
          + leaf.getNotAfter().toInstant());
    } catch (CertificateNotYetValidException e) {
      throw new IllegalArgumentException(certFlag + ": the certificate in " + certFile + " is valid only from "
          + leaf.getNotBefore().toInstant());
    }
    if (!belongTogether(key, leaf.getPublicKey())) {
      throw new IllegalArgumentException(keyFlag + ": " + keyFile + " is not the private key of the certificate in "
          + certFile);
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("identity", key, NO_PASSWORD, chain.toArray(X509Certificate[]::new));
      KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      factory.init(store, NO_PASSWORD);
      return factory.getKeyManagers();
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalArgumentException(keyFlag + ": cannot use the key in " + keyFile + " with the certificate in "
          + certFile + " (" + e.getMessage() + ")");
    }
  }

  /** Trust in exactly the certificates of a CA bundle, instead of the JVM's default authorities. */
  static TrustManager[] trust(String flag, Path bundle) {
    List<X509Certificate> authorities = PemFiles.certificates(flag, bundle);
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      for (int i = 0; i < authorities.size(); i++) {
        store.setCertificateEntry("ca-" + i, authorities.get(i));
      }
      TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(store);
      return factory.getTrustManagers();
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalArgumentException(flag + ": cannot trust the certificates in " + bundle + " ("
          + e.getMessage() + ")");
    }
  }

  /** Signs a probe with the private key and checks it with the certificate's public key. */
  private static boolean belongTogether(PrivateKey key, PublicKey certified) {
    if (!key.getAlgorithm().equals(certified.getAlgorithm())) {
      return false;
    }
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> key.getAlgorithm(); // Ed25519, Ed448 sign with their own name
    };
    try {
      byte[] probe = "redlockd key check".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certified);
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }
}
