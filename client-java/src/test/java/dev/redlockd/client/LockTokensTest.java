package dev.redlockd.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LockTokensTest {

  @Test
  void tokensAreBase64UrlOfTheLengthTheServerAccepts() {
    String token = LockTokens.newToken();
    assertThat(token).hasSize(32).matches("[A-Za-z0-9_-]+");
  }

  @Test
  void tokensDoNotRepeat() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 10_000; i++) {
      assertThat(seen.add(LockTokens.newToken())).isTrue();
    }
  }
}
