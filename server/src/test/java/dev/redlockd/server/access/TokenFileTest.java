package dev.redlockd.server.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class TokenFileTest {
  private static String line(String identity, String token) {
    return identity + " sha256:" + HexFormat.of().formatHex(TokenFile.sha256(token));
  }

  @Test
  void findsTheIdentityOfAKnownTokenOnly() throws Exception {
    TokenFile file = TokenFile.parse("# team tokens\n\n" + line("team-a", "secret-a-123") + "\n"
        + line("team-b", "secret-b-456") + "\n");
    assertThat(file.identityFor("secret-a-123")).contains("team-a");
    assertThat(file.identityFor("secret-b-456")).contains("team-b");
    assertThat(file.identityFor("secret-a-12")).isEmpty();
    assertThat(file.size()).isEqualTo(2);
  }

  @Test
  void sha256MatchesTheShellOneLinerInTheDocs() {
    // The same digest as the shell's: printf %s abc | sha256sum
    assertThat(HexFormat.of().formatHex(TokenFile.sha256("abc")))
        .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }

  @Test
  void badLineIsNamedByNumberWithoutEchoingIt() {
    assertThatThrownBy(() -> TokenFile.parse("team-a plain-secret-token\n"))
        .isInstanceOf(PolicyException.class)
        .hasMessageContaining("line 1")
        .hasMessageNotContaining("plain-secret-token");
  }

  @Test
  void duplicateHashIsRefused() {
    assertThatThrownBy(() -> TokenFile.parse(line("a", "t") + "\n" + line("b", "t")))
        .hasMessageContaining("line 2");
  }

  @Test
  void toStringShowsNoHashes() throws Exception {
    TokenFile file = TokenFile.parse(line("team-a", "secret"));
    assertThat(file.toString()).isEqualTo("TokenFile[1 tokens]");
  }
}
