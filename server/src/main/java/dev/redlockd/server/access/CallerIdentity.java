package dev.redlockd.server.access;

import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Who a call comes from. A verified client certificate names its caller by its first URI subject
 * alternative name (a SPIFFE ID such as {@code spiffe://corp/team-a/api}), else by its subject's
 * common name; without one, a bearer token ({@code authorization: Bearer <token>}) names it through
 * the token file. A certificate wins over a token: the TLS handshake proved it, a token is only
 * presented.
 */
public final class CallerIdentity {
  /** The {@code GeneralName} type of a URI in {@link X509Certificate#getSubjectAlternativeNames}. */
  private static final int URI_NAME = 6;
  private static final String BEARER = "Bearer ";

  private CallerIdentity() {}

  /** The identity of a call, from its TLS session (may be null) and authorization header (may be null). */
  public static Optional<String> of(SSLSession session, String authorization, TokenFile tokens) {
    return credential(session, authorization).flatMap(c -> c.identify(tokens));
  }

  /**
   * What the call presented to prove its identity: its certificate's identity, else its bearer
   * token (hashed), else nothing.
   */
  static Optional<Credential> credential(SSLSession session, String authorization) {
    Optional<String> fromCertificate = fromSession(session);
    if (fromCertificate.isPresent()) {
      return Optional.of(new Credential.Certificate(fromCertificate.get()));
    }
    if (authorization == null || !authorization.startsWith(BEARER)) {
      return Optional.empty();
    }
    return Optional.of(new Credential.Bearer(authorization.substring(BEARER.length()).strip()));
  }

  static Optional<String> fromSession(SSLSession session) {
    if (session == null) {
      return Optional.empty();
    }
    try {
      Certificate[] chain = session.getPeerCertificates();
      if (chain.length > 0 && chain[0] instanceof X509Certificate leaf) {
        return fromCertificate(leaf);
      }
      return Optional.empty();
    } catch (SSLPeerUnverifiedException e) {
      return Optional.empty(); // TLS without a client certificate
    }
  }

  /** The first URI SAN, else the subject's CN, else nothing. */
  public static Optional<String> fromCertificate(X509Certificate certificate) {
    try {
      Collection<List<?>> names = certificate.getSubjectAlternativeNames();
      if (names != null) {
        for (List<?> name : names) {
          if (name.size() == 2 && Integer.valueOf(URI_NAME).equals(name.get(0)) && name.get(1) instanceof String uri
              && !uri.isEmpty()) {
            return Optional.of(uri);
          }
        }
      }
    } catch (CertificateParsingException e) {
      // An unreadable SAN extension: fall back to the subject, as for a certificate without one.
    }
    try {
      LdapName subject = new LdapName(certificate.getSubjectX500Principal().getName());
      for (Rdn rdn : subject.getRdns()) {
        if ("CN".equalsIgnoreCase(rdn.getType()) && rdn.getValue() instanceof String cn && !cn.isEmpty()) {
          return Optional.of(cn);
        }
      }
    } catch (InvalidNameException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }
}
