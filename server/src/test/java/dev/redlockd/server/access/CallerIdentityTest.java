package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redlockd.testing.TestCertificates;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CallerIdentityTest {
  @TempDir static Path dir;
  static TestCertificates.Authority ca;
  static TokenFile tokens;

  @BeforeAll
  static void setUp() throws Exception {
    ca = TestCertificates.authority(dir, "test CA");
    tokens = TokenFile.parse("team-a sha256:" + HexFormat.of().formatHex(TokenFile.sha256("token-a")));
  }

  @Test
  void uriSanIsTheIdentityOverTheCommonName() {
    var issued = ca.issue("api-host", "localhost", "spiffe://corp/team-a/api");
    assertThat(CallerIdentity.fromCertificate(issued.certificate())).contains("spiffe://corp/team-a/api");
  }

  @Test
  void commonNameWithoutUriSan() {
    var issued = ca.issue("ops-1", "localhost", "127.0.0.1");
    assertThat(CallerIdentity.fromCertificate(issued.certificate())).contains("ops-1");
  }

  @Test
  void bearerTokenNamesTheCallerWithoutACertificate() {
    assertThat(CallerIdentity.of(null, "Bearer token-a", tokens)).contains("team-a");
    assertThat(CallerIdentity.of(null, "Bearer token-b", tokens)).isEmpty();
    assertThat(CallerIdentity.of(null, "Basic token-a", tokens)).isEmpty();
    assertThat(CallerIdentity.of(null, null, tokens)).isEmpty();
    assertThat(CallerIdentity.of(null, "Bearer token-a", null)).isEmpty();
  }

  /** What a call presented is kept for later checks, and printed nowhere: neither the token nor its hash. */
  @Test
  void aKeptBearerCredentialPrintsNeitherTokenNorHash() {
    Credential credential = CallerIdentity.credential(null, "Bearer secret-token-123").orElseThrow();
    String hash = java.util.HexFormat.of().formatHex(TokenFile.sha256("secret-token-123"));
    Caller caller = new Caller("team-a", "/10.0.0.7:53412", credential);
    for (String printed : new String[] {credential.toString(), caller.toString()}) {
      assertThat(printed).doesNotContain("secret-token-123").doesNotContainIgnoringCase(hash.substring(0, 16));
    }
    assertThat(caller.toString()).contains("team-a");
    assertThat(CallerIdentity.credential(null, null)).isEmpty();
    assertThat(CallerIdentity.credential(null, "Basic secret-token-123")).isEmpty();
  }
}
