package dev.redlockd.server.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads PEM certificates and PKCS#8 private keys. Every failure is an IllegalArgumentException
 * whose one-line message names the flag and the file (never the key's bytes), so a bad file
 * stops start-up with a reason instead of failing on the first handshake.
 */
final class PemFiles {
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
  /** JSSE needs a key of one of these; the PKCS#8 header says which only in ASN.1, so try each. */
  private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448");

  private PemFiles() {}

  /** Every CERTIFICATE block of the file, in order; at least one. */
  static List<X509Certificate> certificates(String flag, Path file) {
    List<X509Certificate> certificates = new ArrayList<>();
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      for (byte[] der : blocks(flag, file, "CERTIFICATE")) {
        certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
      }
    } catch (CertificateException e) {
      throw new IllegalArgumentException(flag + ": " + file + " holds a CERTIFICATE block that is not a valid "
          + "X.509 certificate");
    }
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException(flag + ": " + file + " holds no PEM certificate "
          + "(-----BEGIN CERTIFICATE-----)");
    }
    return certificates;
  }

  /** The one unencrypted PKCS#8 key of the file (-----BEGIN PRIVATE KEY-----). */
  static PrivateKey privateKey(String flag, Path file) {
    List<byte[]> keys = blocks(flag, file, "PRIVATE KEY");
    if (keys.size() != 1) {
      String text = read(flag, file);
      String why = text.contains("ENCRYPTED PRIVATE KEY") ? "an encrypted key, which needs a passphrase"
          : text.matches("(?s).*-----BEGIN (RSA|EC|DSA) PRIVATE KEY-----.*") ? "a key in the older PKCS#1/SEC1 form"
          : keys.isEmpty() ? "no PEM private key" : keys.size() + " private keys";
      throw new IllegalArgumentException(flag + ": " + file + " holds " + why + "; it needs one unencrypted "
          + "PKCS#8 key (-----BEGIN PRIVATE KEY-----): openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8");
    }
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(keys.get(0));
    for (String algorithm : KEY_ALGORITHMS) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // not this algorithm (or not available in this JDK): try the next
      }
    }
    throw new IllegalArgumentException(flag + ": " + file + " holds a PRIVATE KEY block that is not an RSA, EC "
        + "or EdDSA PKCS#8 key");
  }

  private static List<byte[]> blocks(String flag, Path file, String type) {
    List<byte[]> blocks = new ArrayList<>();
    Matcher m = BLOCK.matcher(read(flag, file));
    while (m.find()) {
      if (m.group(1).equals(type)) {
        try {
          blocks.add(Base64.getMimeDecoder().decode(m.group(2)));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(flag + ": " + file + " holds a " + type + " block that is not base64");
        }
      }
    }
    return blocks;
  }

  private static String read(String flag, Path file) {
    try {
      return Files.readString(file, StandardCharsets.ISO_8859_1);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(flag + ": no such file " + file);
    } catch (IOException e) {
      throw new IllegalArgumentException(flag + ": cannot read " + file + " (" + e.getClass().getSimpleName() + ")");
    }
  }
}
