package dev.redlockd.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificate authorities and certificates made at run time, written as PEM files the way
 * openssl writes them, so no key is ever committed. Keys are EC P-256 (fast to make) unless a
 * test asks for RSA.
 */
public final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  private TestCertificates() {}

  /** A certificate and its private key, both as PEM files (the key in PKCS#8). */
  public record Issued(Path cert, Path key, X509Certificate certificate, PrivateKey privateKey) {}

  /** A new self-signed authority whose files go into {@code dir}. */
  public static Authority authority(Path dir, String name) {
    KeyPair keys = keyPair("EC");
    X500Name subject = new X500Name("CN=" + name);
    Instant now = Instant.now();
    try {
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(),
          Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(2))), subject,
          keys.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
          .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
      X509Certificate cert = sign(builder, keys.getPrivate());
      Path file = dir.resolve(fileName(name) + "-ca.pem");
      Files.createDirectories(dir);
      Files.writeString(file, pem("CERTIFICATE", cert.getEncoded()));
      return new Authority(dir, name, keys, cert, file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An authority that signs certificates for servers and clients alike. */
  public static final class Authority {
    private final Path dir;
    private final String name;
    private final KeyPair keys;
    private final X509Certificate certificate;
    private final Path cert;

    private Authority(Path dir, String name, KeyPair keys, X509Certificate certificate, Path cert) {
      this.dir = dir;
      this.name = name;
      this.keys = keys;
      this.certificate = certificate;
      this.cert = cert;
    }

    /** The authority's own certificate, the file to trust. */
    public Path cert() {
      return cert;
    }

    public X509Certificate certificate() {
      return certificate;
    }

    /**
     * A certificate for {@code name}, good for TLS servers and clients, valid now, with these
     * subject alternative names (names with "://" become URI entries, such as SPIFFE IDs; IP
     * literals IP entries; the rest DNS ones).
     */
    public Issued issue(String name, String... altNames) {
      Instant now = Instant.now();
      return issue(name, "EC", now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)), altNames);
    }

    /** The same with an RSA 2048 key. */
    public Issued issueRsa(String name, String... altNames) {
      Instant now = Instant.now();
      return issue(name, "RSA", now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)), altNames);
    }

    /** A certificate whose validity ended yesterday. */
    public Issued issueExpired(String name, String... altNames) {
      Instant now = Instant.now();
      return issue(name, "EC", now.minus(Duration.ofDays(3)), now.minus(Duration.ofDays(1)), altNames);
    }

    private Issued issue(String subjectName, String algorithm, Instant from, Instant until, String... altNames) {
      KeyPair leaf = keyPair(algorithm);
      try {
        JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
        GeneralName[] names = new GeneralName[altNames.length];
        for (int i = 0; i < altNames.length; i++) {
          boolean uri = altNames[i].contains("://");
          boolean ip = !uri && (altNames[i].matches("[0-9.]+") || altNames[i].contains(":"));
          int type = uri ? GeneralName.uniformResourceIdentifier : ip ? GeneralName.iPAddress : GeneralName.dNSName;
          names[i] = new GeneralName(type, altNames[i]);
        }
        int usage = KeyUsage.digitalSignature | ("RSA".equals(algorithm) ? KeyUsage.keyEncipherment : 0);
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(certificate, serial(),
            Date.from(from), Date.from(until), new X500Name("CN=" + subjectName), leaf.getPublic())
            .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
            .addExtension(Extension.keyUsage, true, new KeyUsage(usage))
            .addExtension(Extension.extendedKeyUsage, false,
                new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
            .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(certificate))
            .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(leaf.getPublic()));
        if (names.length > 0) {
          builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
        }
        X509Certificate cert = sign(builder, keys.getPrivate());
        String base = fileName(this.name) + "-" + fileName(subjectName) + "-" + SERIAL.incrementAndGet();
        Path certFile = dir.resolve(base + ".pem");
        Path keyFile = dir.resolve(base + ".key");
        Files.writeString(certFile, pem("CERTIFICATE", cert.getEncoded()));
        Files.writeString(keyFile, pem("PRIVATE KEY", leaf.getPrivate().getEncoded()));
        return new Issued(certFile, keyFile, cert, leaf.getPrivate());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** The key in the older PKCS#1 / SEC1 form ("BEGIN RSA PRIVATE KEY") that openssl 1.x wrote by default. */
  public static Path writeLegacyKey(PrivateKey key, Path file) {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
      writer.writeObject(key);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      return Files.writeString(file, text.toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A file holding the given PEM files one after another (a chain or a CA bundle). */
  public static Path concat(Path target, Path... files) {
    try {
      StringBuilder all = new StringBuilder();
      for (Path f : files) {
        all.append(Files.readString(f));
      }
      return Files.writeString(target, all.toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey issuerKey)
      throws GeneralSecurityException {
    String algorithm = "RSA".equals(issuerKey.getAlgorithm()) ? "SHA256withRSA" : "SHA256withECDSA";
    try {
      return new JcaX509CertificateConverter().getCertificate(
          builder.build(new JcaContentSignerBuilder(algorithm).build(issuerKey)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }

  private static KeyPair keyPair(String algorithm) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance(algorithm);
      if ("EC".equals(algorithm)) {
        generator.initialize(new ECGenParameterSpec("secp256r1"));
      } else {
        generator.initialize(2048);
      }
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static BigInteger serial() {
    return BigInteger.valueOf(SERIAL.incrementAndGet());
  }

  private static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }

  private static String fileName(String name) {
    return name.replaceAll("[^A-Za-z0-9.-]", "_");
  }
}
